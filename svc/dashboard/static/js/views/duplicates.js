// One bug, many reports (docs/api.md §8.11 to §8.13): on a report's page what it is a
// duplicate of, how many people reported it, and the similar reports with one-click "Mark as
// duplicate"; in the list and the overview, the groups of one signature. What a reporter sent
// (titles, a group's label) is text here, never markup.

import { api, query } from "../api.js";
import { actionButton, badge, field, form, h, plural, replaceContent } from "../dom.js";

// "3 min ago", in the member's language.
export function ago(iso) {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  const words = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (Math.abs(seconds) >= size) return words.format(Math.round(seconds / size), unit);
  }
  return words.format(Math.round(seconds), "second");
}

// A group as one line: "console: typeerror: … · 12 reports from 9 reporters, newest 3 min ago".
export function groupItem(group) {
  const href = `/reports${query({ signature: group.signature, project_id: group.projectId })}`;
  return h("li", { class: "group" },
    h("a", { href }, h("code", { class: "group-label" }, group.label)),
    h("span", { class: "group-figures" },
      ` ${plural(group.count, "report")} from ${plural(group.reporterCount, "reporter")}, newest ${ago(group.newestAt)} `),
    h("a", { href: `/reports/${encodeURIComponent(group.newest.trackingId)}`, class: "hint" },
      `${group.newest.trackingId}: ${group.newest.title}`));
}

// The report page's panel. `changed` redraws what the page drew from the report.
export function duplicatesPanel(report, canEdit, changed) {
  const panel = h("section", { class: "panel", "aria-label": "Duplicates" });
  // The answer is the report as it is now; a refusal's words go beside the button.
  const apply = async (request) => {
    try {
      Object.assign(report, await request());
    } catch (error) {
      if (error.errors) error.message = Object.values(error.errors).flat().join(" ");
      throw error;
    }
    changed();
    await draw();
  };
  const markAs = (target) => apply(() => api.post(`/reports/${report.id}/duplicate-of`, { target }));
  const similarList = (items) => items.length
    ? h("ol", { class: "similar" }, items.map((item) => h("li", {},
      h("a", { href: `/reports/${encodeURIComponent(item.report.trackingId)}` }, item.report.trackingId),
      " ", h("span", { class: "title" }, item.report.title), " ", badge("status", item.report.status),
      h("span", { class: "hint" }, ` ${Math.round(item.score * 100)}\u00a0%: ${item.reasons.join(", ")} `),
      canEdit ? actionButton("Mark as duplicate", () => markAs(item.report.id),
        { class: "secondary small", "aria-label": `Mark ${report.trackingId} a duplicate of ${item.report.trackingId}` }) : null)))
    : h("p", { class: "empty" }, "No similar reports.");
  const draw = async () => {
    const merged = report.duplicateOf;
    const similar = merged ? null : await api.get(`/reports/${report.id}/similar?limit=5`);
    replaceContent(panel,
      h("h2", {}, "Duplicates"),
      merged ? h("p", { class: "merged" }, "A duplicate of ",
        h("a", { href: `/reports/${encodeURIComponent(merged.trackingId)}` }, merged.trackingId),
        ": its reporter follows that report. ",
        canEdit ? actionButton("Not a duplicate", () => apply(() => api.delete(`/reports/${report.id}/duplicate-of`)),
          { class: "secondary small" }) : null) : null,
      report.duplicateCount ? h("p", { class: "group-figures" },
        `${plural(report.duplicateCount, "duplicate")}: reported by ${plural(report.reporterCount, "person", "people")}.`) : null,
      merged ? null : h("h3", {}, "Similar reports"),
      merged ? null : similarList(similar.items),
      canEdit && !merged ? form({ class: "inline", "aria-label": "Mark as duplicate of" }, [
        field("Duplicate of", h("input", { name: "target", required: true, maxlength: 64, placeholder: "WS-12" })),
        h("button", { type: "submit", class: "secondary" }, "Mark as duplicate"),
      ], (values) => markAs(values.target.trim())) : null);
  };
  return { element: panel, draw };
}
