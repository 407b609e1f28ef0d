/** The pipeline-project front end: a `spark-pipeline.yml` spec and its SQL files as Ebb's definition. */
export { readPipelineProject, readSqlFiles, projectPath, SQL_DIALECT_KEY } from "./read-project.ts";
export type { PipelineProject, ProjectDefinition, ProjectSettings } from "./read-project.ts";
export { ProjectError, PROJECT_ISSUE_CODES, formatLocation } from "./errors.ts";
export type { ProjectIssue, ProjectIssueCode, ProjectLocation } from "./errors.ts";
export { SPEC_FILE_NAMES } from "./project-spec.ts";
export { locateDefinitionError } from "./definition-locations.ts";
