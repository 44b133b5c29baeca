// Runs of a report's steps on the project's staging origin (docs/repro-kit.md, "The runner"):
// on the report's page the verdicts with their evidence, trace and screenshot, and "Run on
// staging" / "Run again" for members; on the project's page the owner's setting. What a run
// found (an error's words) is the reporter's app's text: shown as text, never markup.

import { api } from "../api.js";
import { actionButton, formatTime, form, h, label, notice, replaceContent } from "../dom.js";

const VERDICTS = {
  reproduced: "Reproduced on staging",
  not_reproduced: "Not reproduced",
  inconclusive: "Inconclusive: the report holds no error to look for",
  failed: "Could not run",
};
// How often the page asks after a queued or running run.
const POLL_MS = 2000;

function runItem(run) {
  const said = run.status === "done" ? VERDICTS[run.verdict] || run.verdict : `${label(run.status)}…`;
  const by = run.auto ? "automatically" : run.requestedBy ? `by ${run.requestedBy.name}` : "";
  return h("li", { class: `reproduction verdict-${run.verdict || run.status}` },
    h("strong", {}, said),
    h("span", { class: "hint" }, ` ${formatTime(run.finishedAt || run.createdAt)} ${by}`),
    run.durationMs != null ? h("span", { class: "hint" }, `, ${(run.durationMs / 1000).toFixed(1)} s`) : null,
    run.evidence.length ? h("ul", {}, run.evidence.map((seen) => h("li", {}, h("code", {}, seen)))) : null,
    run.failedStep ? h("p", { class: "failed-step" },
      run.failedStep.index ? `Step ${run.failedStep.index}: ` : "", run.failedStep.reason) : null,
    run.requestsBlocked ? h("p", { class: "hint" }, `${run.requestsBlocked} request(s) outside staging were blocked.`) : null,
    h("p", { class: "button-row" },
      run.traceUrl ? h("a", { href: run.traceUrl, download: "trace.zip" }, "Trace") : null,
      run.screenshotUrl ? h("a", { href: run.screenshotUrl, target: "_blank", rel: "noopener" }, " Screenshot") : null));
}

// The report page's panel; `changed` adds the run's activity to the page.
export function reproductionsPanel(report, project, canEdit, changed) {
  const panel = h("section", { class: "panel", "aria-label": "On staging" });
  const origin = project.settings.repro.origin;
  let timer = null;
  const draw = async () => {
    const { items, unavailable } = await api.get(`/reports/${report.id}/reproductions`);
    const pending = items.some((run) => run.status !== "done");
    replaceContent(panel,
      h("h2", {}, "On staging"),
      origin ? null : h("p", { class: "hint" },
        "Set the project's staging origin (project settings, \u201cOn staging\u201d) to run this report's steps there."),
      unavailable ? h("p", { class: "hint" }, `Runs are unavailable on this service: ${unavailable}.`) : null,
      items.length ? h("ol", { class: "reproductions" }, items.map(runItem)) : h("p", { class: "empty" }, "Never run."),
      canEdit && origin && !pending && !unavailable ? actionButton(items.length ? "Run again" : "Run on staging", async () => {
        await api.post(`/reports/${report.id}/reproductions`);
        await draw();
      }) : null);
    clearTimeout(timer);
    if (pending) {
      timer = setTimeout(async () => {
        if (!panel.isConnected) return;
        await draw();
        if (!panel.querySelector(".verdict-queued, .verdict-running")) changed();
      }, POLL_MS);
    }
  };
  return { element: panel, draw };
}

// The project page's panel: where reports' steps run, whether every new one is (owners).
export function reproSettingsPanel(project, owner) {
  const chosen = project.settings.repro;
  const saved = notice("");
  saved.hidden = true;
  return h("section", { class: "panel", "aria-label": "On staging" },
    h("h2", {}, "On staging"),
    form({ "aria-label": "On staging" }, [
      h("p", { class: "hint" }, "svc runs a report's steps in a browser against this origin alone (never the reporter's address) and says whether the bug came back."),
      h("div", { class: "field" }, h("label", { for: "repro-origin" }, "Staging origin"),
        h("input", { id: "repro-origin", name: "origin", type: "url", value: chosen.origin || "",
          placeholder: "https://staging.shop.example", disabled: !owner })),
      h("div", { class: "field" }, h("label", { for: "repro-timeout" }, "Time limit (seconds)"),
        h("input", { id: "repro-timeout", name: "timeout_seconds", type: "number", min: 10, max: 300,
          value: chosen.timeoutSeconds, disabled: !owner })),
      h("label", { class: "switch" }, h("input", { type: "checkbox", name: "auto", checked: chosen.auto, disabled: !owner }),
        " Run every new report with steps (at most 30 an hour)"),
      owner ? h("button", { type: "submit" }, "Save") : h("p", { class: "hint" }, "Only the owner can change this."),
      saved,
    ], async (values) => {
      const updated = await api.patch(`/projects/${project.id}`, { settings: { repro: {
        origin: values.origin.trim() || null,
        timeout_seconds: Number(values.timeout_seconds),
        auto: Boolean(values.auto),
      } } });
      Object.assign(project, updated);
      saved.textContent = project.settings.repro.origin ? `Reports run on ${project.settings.repro.origin}.` : "No report is run.";
      saved.hidden = false;
    }));
}
