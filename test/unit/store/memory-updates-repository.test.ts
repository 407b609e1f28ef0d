import { MemoryUpdatesRepository } from "../../../shared/store/memory-updates-repository.ts";
import { updatesRepositoryContract } from "./updates-repository-contract.ts";

updatesRepositoryContract("MemoryUpdatesRepository", (now) => new MemoryUpdatesRepository(now));
