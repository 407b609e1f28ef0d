import { updatesRepository } from "./repositories.ts";
import { updatesRepositoryContract } from "../../unit/store/updates-repository-contract.ts";

updatesRepositoryContract("DynamoUpdatesRepository", updatesRepository);
