import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { loadAppConfig } from "./api/app-config.ts";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: { retry: (count, error) => count < 2 && !(error as { status?: number }).status, staleTime: 500 },
  },
});

const root = createRoot(document.getElementById("root")!);
loadAppConfig().then(
  (config) =>
    root.render(
      <StrictMode>
        <QueryClientProvider client={queryClient}>
          <App config={config} />
        </QueryClientProvider>
      </StrictMode>,
    ),
  (error: Error) => root.render(<div className="splash">The app cannot start: {error.message}</div>),
);
