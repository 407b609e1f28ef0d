import { writesTogetherContract } from "../../unit/store/writes-together-contract.ts";
import { eventLogRepository, pipelinesRepository, updatesRepository } from "./repositories.ts";

writesTogetherContract("the DynamoDB repositories", () => ({
  updates: updatesRepository(),
  pipelines: pipelinesRepository(),
  events: eventLogRepository(),
}));
