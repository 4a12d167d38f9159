// The lab actions of this UI session, in order, as scenario steps: "Save as scenario" turns
// them into a TOML file (`POST /api/scenario`) that `hooklab run` replays headless in CI.
import type { ScenarioStep } from "./types";

export const session = $state<{ steps: ScenarioStep[] }>({ steps: [] });

export function record(step: ScenarioStep) {
  session.steps.push(step);
}
