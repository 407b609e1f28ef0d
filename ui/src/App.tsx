import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { AppConfig } from "./api/app-config.ts";
import { isUnauthenticated, signIn, signOut, signRequestsAs } from "./api/client.ts";
import { beginSignIn, completeSignIn } from "./api/cognito-sign-in.ts";
import { logoutUrl, redirectUri } from "./api/hosted-sign-in.ts";
import { usePipelines } from "./api/queries.ts";
import { ErrorBoundary } from "./components/ErrorBoundary.tsx";
import { LoginPage } from "./pages/LoginPage.tsx";
import { BranchPage } from "./pages/BranchPage.tsx";
import { CutRewindPage } from "./pages/CutRewindPage.tsx";
import { PipelinePage } from "./pages/PipelinePage.tsx";
import { PipelinesPage } from "./pages/PipelinesPage.tsx";
import { RewindPage } from "./pages/RewindPage.tsx";
import { TablePage } from "./pages/TablePage.tsx";
import { navigate, paths, useRoute } from "./routing.ts";
import { setDisplayZone, useDisplayZone, zoneName } from "./time/display-zone.ts";
import { zoneChoices } from "./time/zoned-time.ts";

/**
 * The shell: signs in — on the local runtime from a one-time link (`/#token=…`, the fragment is
 * removed at once) or the token; on AWS through Cognito's hosted sign-in (cognito-sign-in.ts) —,
 * shows the login page while the API answers 401, and otherwise the page the route names.
 */
export function App({ config }: { config: AppConfig }) {
  const route = useRoute();
  // Every time on every page is written in this zone: switching it re-renders the whole app.
  const zone = useDisplayZone();
  const choices = zoneChoices();
  const queryClient = useQueryClient();
  const cognito = "apiUrl" in config ? config : undefined;
  const [auth, setAuth] = useState<"link" | "unknown" | "in" | "out">(() =>
    cognito ? "link" : window.location.hash.startsWith("#token=") ? "link" : "unknown",
  );
  const [problem, setProblem] = useState<string>();
  const [user, setUser] = useState<string>();

  useEffect(() => {
    if (auth !== "link" || !cognito) return;
    completeSignIn(cognito.signIn).then(
      (session) => {
        if (!session) return setAuth("out");
        signRequestsAs({ ...cognito, session });
        setUser(session.user);
        setAuth("in");
      },
      (error: Error) => {
        setProblem(error.message);
        setAuth("out");
      },
    );
  }, [auth, cognito]);

  useEffect(() => {
    if (auth !== "link" || cognito) return;
    const token = decodeURIComponent(window.location.hash.slice("#token=".length));
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
    signIn(token).then(
      () => setAuth("in"),
      (error: Error) => {
        setProblem(error.message);
        setAuth("out");
      },
    );
  }, [auth, cognito]);

  // Any 401 (an expired session after a restart, a sign-out elsewhere) shows the sign-in page. The
  // page renders beside the probe, not after it: its own requests start at once, and a 401 on the
  // probe replaces it with the sign-in page as soon as it is known.
  const probe = usePipelines(auth === "unknown" || auth === "in");
  const unauthenticated = isUnauthenticated(probe.error);
  useEffect(() => {
    if (unauthenticated) setAuth("out");
  }, [unauthenticated]);

  if (auth === "link") return <div className="splash">Signing in…</div>;
  if (auth === "out") {
    return (
      <LoginPage
        problem={problem}
        signIn={signIn}
        hostedSignIn={cognito ? () => beginSignIn(cognito.signIn) : undefined}
        onSignedIn={() => {
          setProblem(undefined);
          queryClient.clear();
          setAuth("in");
        }}
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
          <a
            href={paths.cut()}
            aria-current={route.page === "cut" ? "page" : undefined}
            onClick={(e) => {
              e.preventDefault();
              navigate(paths.cut());
            }}
          >
            One cut
          </a>
        </nav>
        <span className="topbar-spacer" />
        {choices.length > 1 ? (
          <div className="segmented zone-switch" role="group" aria-label="Show times in">
            {choices.map((choice) => (
              <button
                key={choice}
                type="button"
                aria-pressed={zone === choice}
                onClick={() => setDisplayZone(choice)}
              >
                {zoneName(choice)}
              </button>
            ))}
          </div>
        ) : (
          <span className="topbar-note" aria-label="Times shown in UTC">
            UTC
          </span>
        )}
        <span className="topbar-note">{cognito ? (user ?? "AWS") : "local runtime"}</span>
        <button
          type="button"
          className="button button-quiet"
          onClick={() => {
            if (cognito) {
              signRequestsAs(undefined);
              queryClient.clear();
              window.location.assign(logoutUrl(cognito.signIn, redirectUri(window.location)));
              return;
            }
            void signOut().then(() => {
              queryClient.clear();
              setAuth("out");
            });
          }}
        >
          Sign out
        </button>
      </header>
      <main className="content">
        <ErrorBoundary key={JSON.stringify(route)}>
          {route.page === "pipelines" && <PipelinesPage />}
          {route.page === "pipeline" && (
            <PipelinePage key={route.id} id={route.id} tab={route.tab} update={route.update} />
          )}
          {route.page === "rewind" && <RewindPage key={route.id} id={route.id} point={route.point} />}
          {route.page === "branch" && (
            <BranchPage key={`${route.id}/${route.name}`} pipelineId={route.id} name={route.name} />
          )}
          {route.page === "cut" && <CutRewindPage key={route.from ?? ""} from={route.from} />}
          {route.page === "table" && (
            <TablePage key={route.table} table={route.table} pipelineId={route.pipelineId} />
          )}
        </ErrorBoundary>
      </main>
    </div>
  );
}
