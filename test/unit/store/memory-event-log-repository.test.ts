import { MemoryEventLogRepository } from "../../../shared/store/memory-event-log-repository.ts";
import { eventLogRepositoryContract } from "./event-log-repository-contract.ts";

eventLogRepositoryContract("MemoryEventLogRepository", (now) => new MemoryEventLogRepository(now));
