import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { isUnauthenticated, signIn, signOut } from "./api/client.ts";
import { usePipelines } from "./api/queries.ts";
import { LoginPage } from "./pages/LoginPage.tsx";
import { PipelinePage } from "./pages/PipelinePage.tsx";
import { PipelinesPage } from "./pages/PipelinesPage.tsx";
import { RewindPage } from "./pages/RewindPage.tsx";
import { TablePage } from "./pages/TablePage.tsx";
import { navigate, paths, useRoute } from "./routing.ts";

/**
 * The shell: signs in from a one-time link (`/#token=…`, the fragment is removed at once), shows the
 * login page while the API answers 401, and otherwise the page the route names.
 */
export function App() {
  const route = useRoute();
  const queryClient = useQueryClient();
  const [linkSignIn, setLinkSignIn] = useState<"pending" | "done" | string>(() =>
    window.location.hash.startsWith("#token=") ? "pending" : "done",
  );

  useEffect(() => {
    if (linkSignIn !== "pending") return;
    const token = decodeURIComponent(window.location.hash.slice("#token=".length));
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
    signIn(token).then(
      () => {
        void queryClient.invalidateQueries();
        setLinkSignIn("done");
      },
      (error: Error) => setLinkSignIn(error.message),
    );
  }, [linkSignIn, queryClient]);

  const probe = usePipelines();
  if (linkSignIn === "pending") return <div className="splash">Signing in…</div>;
  if (isUnauthenticated(probe.error) || linkSignIn !== "done") {
    return (
      <LoginPage
        problem={linkSignIn !== "done" ? linkSignIn : undefined}
        onSignedIn={() => {
          setLinkSignIn("done");
          void queryClient.resetQueries();
        }}
        signIn={signIn}
      />
    );
  }

  return (
    <div className="shell">
      <header className="topbar">
        <a
          className="brand"
          href={paths.pipelines()}
          onClick={(e) => {
            e.preventDefault();
            navigate(paths.pipelines());
          }}
        >
          <span className="brand-mark" aria-hidden="true">
            ≈
          </span>
          Ebb
        </a>
        <nav aria-label="Main">
          <a
            href={paths.pipelines()}
            aria-current={route.page === "pipelines" ? "page" : undefined}
            onClick={(e) => {
              e.preventDefault();
              navigate(paths.pipelines());
            }}
          >
            Pipelines
          </a>
        </nav>
        <span className="topbar-spacer" />
        <span className="topbar-note">local runtime</span>
        <button
          type="button"
          className="button button-quiet"
          onClick={() => {
            void signOut().then(() => queryClient.resetQueries());
          }}
        >
          Sign out
        </button>
      </header>
      <main className="content">
        {route.page === "pipelines" && <PipelinesPage />}
        {route.page === "pipeline" && <PipelinePage key={route.id} id={route.id} tab={route.tab} />}
        {route.page === "rewind" && <RewindPage key={route.id} id={route.id} />}
        {route.page === "table" && (
          <TablePage key={route.table} table={route.table} pipelineId={route.pipelineId} />
        )}
      </main>
    </div>
  );
}
