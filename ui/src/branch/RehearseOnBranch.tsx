import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { BRANCH_NAME_RULE, isBranchName } from "../../../shared/pipeline/branch-name.ts";
import { ebb } from "../api/client.ts";
import { keys } from "../api/queries.ts";
import type { RewindSpec } from "../api/types.ts";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { navigate, paths } from "../routing.ts";

/**
 * "Rehearse on a branch" (docs/branches.md): the wizard's rewind, sent with `rewind_spec.branch`, so
 * Ebb makes a branch at the point instead of moving live; then the branch's page. The name is checked
 * here by the API's own rule before it is sent; the API's refusals (a name taken, the rewind's
 * checks) are shown as it words them.
 */
export function RehearseOnBranch({ pipelineId, spec }: { pipelineId: string; spec: RewindSpec | undefined }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const hintId = useId();
  const invalid = name !== "" && !isBranchName(name);
  const make = useMutation({
    mutationFn: () => ebb.createBranch(pipelineId, name, { ...spec! }),
    onSuccess: ({ branch }) => {
      void queryClient.invalidateQueries({ queryKey: keys.branches(pipelineId) });
      navigate(paths.branch(pipelineId, branch.name));
    },
  });
  return (
    <form
      className="step rehearse"
      aria-labelledby={`${hintId}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        if (spec && isBranchName(name)) make.mutate();
      }}
    >
      <h2 id={`${hintId}-title`}>Rehearse on a branch</h2>
      <p className="subtle">
        Instead of moving the live tables, Ebb makes a branch at this point (metadata only): compare it with
        live, then publish it or discard it. Live keeps serving meanwhile.
      </p>
      <div className="row">
        <label className="field field-inline">
          <span>Branch name</span>
          <input
            value={name}
            onChange={(e) => {
              setName(e.target.value);
              make.reset();
            }}
            placeholder="fix-1"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={invalid}
            aria-describedby={hintId}
          />
        </label>
        <button type="submit" className="button" disabled={!spec || !isBranchName(name) || make.isPending}>
          {make.isPending ? "Making the branch…" : "Make the branch"}
        </button>
      </div>
      <p id={hintId} className={invalid ? "bad" : "subtle"}>
        {invalid ? `"${name}" cannot name a branch: ${BRANCH_NAME_RULE}.` : `A name: ${BRANCH_NAME_RULE}.`}
      </p>
      <ErrorNote error={make.error} title="The branch is refused; nothing was made." />
    </form>
  );
}
