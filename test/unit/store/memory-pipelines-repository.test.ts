import { MemoryPipelinesRepository } from "../../../shared/store/memory-pipelines-repository.ts";
import { pipelinesRepositoryContract } from "./pipelines-repository-contract.ts";

pipelinesRepositoryContract("MemoryPipelinesRepository", (now) => new MemoryPipelinesRepository(now));
