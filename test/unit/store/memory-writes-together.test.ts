import { MemoryEventLogRepository } from "../../../shared/store/memory-event-log-repository.ts";
import { MemoryPipelinesRepository } from "../../../shared/store/memory-pipelines-repository.ts";
import { MemoryUpdatesRepository } from "../../../shared/store/memory-updates-repository.ts";
import { writesTogetherContract } from "./writes-together-contract.ts";

writesTogetherContract("the memory repositories", () => ({
  updates: new MemoryUpdatesRepository(),
  pipelines: new MemoryPipelinesRepository(),
  events: new MemoryEventLogRepository(),
}));
