// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import { layering } from "./eslint-rules/layering.js";

/** Folders of the pure core: protocol and domain logic only, never an AWS SDK. */
const PURE_CORE = [
  "shared/delta/**",
  "shared/engine/**",
  "shared/pipeline/**",
  "shared/project/**",
  "shared/rewind/**",
];

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      "cdk.out/**",
      ".ebb/**",
      "coverage/**",
      "ui/dist/**",
      "dist/**",
      ".scratch/**",
      ".clients/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    plugins: { layering },
    rules: {
      "layering/delta-front-door": "error",
      "layering/core-imports-no-apps": "error",
      "layering/folder-floors": "error",
    },
  },
  // The Delta layer's own unit tests exercise its internals directly.
  { files: ["test/unit/delta/**"], rules: { "layering/delta-front-door": "off" } },
  {
    files: ["ui/src/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: PURE_CORE,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@aws-sdk/*", "aws-cdk-lib", "aws-cdk-lib/*"],
              message: "The pure core must not depend on AWS: take a port from shared/store instead.",
            },
          ],
        },
      ],
    },
  },
);
