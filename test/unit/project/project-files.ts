import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** A project folder's files by path relative to it, as `ebb deploy` sends them. */
export function projectFolder(root: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of readdirSync(root, { recursive: true }) as string[]) {
    if (statSync(join(root, path)).isFile())
      files.set(path.split("\\").join("/"), readFileSync(join(root, path), "utf8"));
  }
  return files;
}

/** A project from a spec and SQL files given inline. */
export function inlineProject(files: Record<string, string>, spec?: string) {
  return {
    specPath: "spark-pipeline.yml",
    spec:
      spec ??
      "name: test\ncatalog: main\ndatabase: sales\nconfiguration:\n  landing: s3://landing-bucket/orders\nlibraries:\n  - glob:\n      include: transformations/**\n",
    files: new Map(Object.entries(files)),
  };
}
