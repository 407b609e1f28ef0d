import { checkpointsRepository, pipelinesRepository } from "./repositories.ts";
import { checkpointsRepositoryContract } from "../../unit/store/checkpoints-repository-contract.ts";

checkpointsRepositoryContract("DynamoCheckpointsRepository", checkpointsRepository, () => ({
  checkpoints: checkpointsRepository(),
  pipelines: pipelinesRepository(),
}));
