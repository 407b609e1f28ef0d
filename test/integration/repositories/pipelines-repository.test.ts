import { pipelinesRepository } from "./repositories.ts";
import { pipelinesRepositoryContract } from "../../unit/store/pipelines-repository-contract.ts";

pipelinesRepositoryContract("DynamoPipelinesRepository", pipelinesRepository);
