// What a project keeps and for how long: its usage, its retention setting (owners), and one
// reporter's data handed over or erased (owners; docs/api.md §7.4). And the instance's usage for
// the administration page.

import { api, query } from "../api.js";
import { confirmDialog, field, form, formatTime, h, label, notice, plural, replaceContent } from "../dom.js";
import { STATUSES } from "../constants.js";

export function bytesInWords(bytes) {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit ? `${value.toFixed(1)} ${units[unit]}` : `${value} bytes`;
}

export function dataPanel(project, owner) {
  const usage = h("dl", { class: "usage" });
  const count = async () => {
    const found = await api.get(`/projects/${project.id}/usage`);
    replaceContent(usage,
      h("dt", {}, "Reports"), h("dd", {}, String(found.reports)),
      h("dt", {}, "Comments"), h("dd", {}, String(found.comments)),
      h("dt", {}, "Files"), h("dd", {}, `${found.objects.count} (${bytesInWords(found.objects.bytes)})`),
      h("dt", {}, "Oldest report"), h("dd", {}, found.oldestReportAt ? formatTime(found.oldestReportAt) : "none"));
  };
  count();
  return h("section", { class: "panel", "aria-label": "Data and retention" },
    h("h2", {}, "Data and retention"), usage,
    retentionForm(project, owner),
    owner ? reporterForm(project, count) : null);
}

function retentionForm(project, owner) {
  const retention = project.settings.retention;
  const saved = notice("");
  saved.hidden = true;
  return form({ "aria-label": "Retention" }, [
    h("h3", {}, "Retention"),
    field("Delete reports after (days)", h("input", { name: "days", type: "number", min: 1, max: 3650,
      value: retention.days ?? "", placeholder: "keep forever", disabled: !owner }),
    "Reports with one of the statuses below that nobody has changed for this many days are deleted, with their files and comments, by the scheduler each hour. Empty: keep everything."),
    h("fieldset", { class: "switches" }, h("legend", {}, "Statuses"),
      STATUSES.map((status) => h("label", {}, h("input", { type: "checkbox", name: `status.${status}`,
        checked: retention.statuses.includes(status), disabled: !owner }), label(status)))),
    owner ? h("button", { type: "submit" }, "Save retention") : h("p", { class: "hint" }, "Only the owner can change retention."),
    saved,
  ], async (values) => {
    const updated = await api.patch(`/projects/${project.id}`, { settings: { retention: {
      days: values.days ? Number(values.days) : null,
      statuses: STATUSES.filter((status) => values[`status.${status}`]),
    } } });
    Object.assign(project, updated);
    const kept = project.settings.retention;
    saved.textContent = kept.days ? `Reports ${kept.statuses.map(label).join(", ")} for ${plural(kept.days, "day")} are deleted.` : "Every report is kept.";
    saved.hidden = false;
  });
}

// `erased()` after an erasure: the usage above is counted again.
function reporterForm(project, erased) {
  const done = notice("");
  done.hidden = true;
  const input = h("input", { name: "reporter_identifier", required: true, maxlength: 320, placeholder: "jo@example.com" });
  const download = h("a", { download: "", hidden: true }, "Download their reports (NDJSON)");
  input.addEventListener("input", () => {
    download.href = `/api/v1/projects/${project.id}/reporter-data${query({ reporter_identifier: input.value.trim() })}`;
    download.hidden = !input.value.trim();
  });
  return form({ "aria-label": "One reporter's data" }, [
    h("h3", {}, "One reporter's data"),
    field("Reporter", input, "As the widget sent it (an e-mail address, a user id); any case."),
    h("p", {}, download),
    h("button", { type: "submit", class: "danger" }, "Erase their reports"),
    done,
  ], async (values) => {
    const who = values.reporter_identifier.trim();
    if (!await confirmDialog(`Erase every report of ${who} in this project? This cannot be undone. `
      + "Issues created in a tracker from these reports are not reached: remove them in the tracker.", "Erase")) return;
    const gone = await api.post(`/projects/${project.id}/reporter-data/erase`, { reporter_identifier: who });
    done.textContent = `${plural(gone.reports, "report")} of ${who} erased, and the address removed from what waits to be sent.`;
    done.hidden = false;
    await erased();
  });
}

export function instanceUsagePanel(found) {
  return h("section", { class: "panel", "aria-label": "Usage" }, h("h2", {}, "Usage"),
    h("p", {}, `${plural(found.totals.reports, "report")}, ${plural(found.totals.objects.count, "file")} (${bytesInWords(found.totals.objects.bytes)})`,
      found.database.bytes === null ? "." : `; the database takes ${bytesInWords(found.database.bytes)}.`),
    h("div", { class: "table-wrap" }, h("table", { class: "usage" },
      h("thead", {}, h("tr", {}, ...["Project", "Reports", "Files", "Size"].map((text) => h("th", {}, text)))),
      h("tbody", {}, found.projects.map((row) => h("tr", {},
        h("td", { "data-label": "Project" }, h("a", { href: `/projects/${row.id}#data` }, row.name)),
        h("td", { "data-label": "Reports" }, String(row.reports)),
        h("td", { "data-label": "Files" }, String(row.objects.count)),
        h("td", { "data-label": "Size" }, bytesInWords(row.objects.bytes))))))));
}
