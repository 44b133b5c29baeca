// Issue trackers (docs/integrations.md): the project page's Integrations section (owners
// connect, change and remove them; everyone sees them, their webhook URL and what the tracker
// sent) and the report page's linked issues with "Create issue".

import { api, query } from "../api.js";
import {
  actionButton, badge, confirmDialog, copyButton, field, form, formatTime, h, notice, pageButtons,
  replaceContent, select,
} from "../dom.js";
import { CATEGORIES, SEVERITIES, TRACKERS } from "../constants.js";

const CALL_PAGE_SIZE = 10;

// Each kind's settings: [config key, label, placeholder, hint]; lists are comma-separated.
const CONFIG_FIELDS = {
  github: [["repository", "Repository", "owner/name"],
    ["api_url", "API URL", "https://api.github.com", "Enterprise Server: https://host/api/v3"],
    ["labels", "Labels", "bug, from-svc", "Comma-separated; optional."]],
  gitlab: [["project", "Project", "group/name", "The path or the numeric id."],
    ["api_url", "API URL", "https://gitlab.com/api/v4"],
    ["labels", "Labels", "bug", "Comma-separated; optional."]],
  jira: [["site_url", "Site URL", "https://example.atlassian.net"],
    ["project_key", "Project key", "PROJ"],
    ["issue_type", "Issue type", "Bug"],
    ["email", "E-mail (Jira Cloud)", "you@example.com", "Jira Cloud: the token's account. Server / Data Center: leave empty."]],
  linear: [["team_id", "Team id", "the team's UUID"],
    ["api_url", "API URL", "https://api.linear.app/graphql"],
    ["label_ids", "Label ids", "", "Comma-separated; optional."]],
};
const LISTS = new Set(["labels", "label_ids"]);

export function integrationsPanel(project) {
  const panel = h("section", { class: "panel", "aria-label": "Integrations" });
  const owner = project.role === "owner";
  const member = project.role !== "viewer";
  const load = async () => {
    const integrations = await api.get(`/projects/${project.id}/integrations`);
    replaceContent(panel,
      h("h2", {}, "Integrations"),
      h("p", {}, "Reports become issues in your team's tracker, and their states follow each other both ways. ",
        h("a", { href: "/docs/integrations.md", target: "_blank", rel: "noopener" }, "What each tracker needs"), "."),
      integrations.length
        ? integrations.map((integration) => integrationCard(integration, owner, member, load))
        : h("p", { class: "empty" }, "No tracker is connected yet."),
      owner ? newIntegrationForm(project, load) : null);
  };
  load().catch((error) => replaceContent(panel, h("h2", {}, "Integrations"), h("p", { role: "alert" }, error.message)));
  return panel;
}

function configOf(kind, values) {
  const config = {};
  for (const [key] of CONFIG_FIELDS[kind]) {
    const raw = (values[`config.${key}`] || "").trim();
    if (LISTS.has(key)) config[key] = raw.split(",").map((item) => item.trim()).filter(Boolean);
    else if (raw) config[key] = raw;
  }
  return config;
}

function autoCreateOf(values) {
  if (!values.auto_create) return null;
  return {
    severities: values.auto_severities ? [values.auto_severities] : [],
    categories: values.auto_categories ? [values.auto_categories] : [],
  };
}

// Inputs with ids of their own: several of these forms share the page with the settings form.
function input(prefix, attributes) {
  return h("input", { id: `${prefix}-${attributes.name.replace(/[^\w-]/g, "-")}`, ...attributes });
}

function newIntegrationForm(project, reload) {
  const kindSelect = select("kind", TRACKERS.map((kind) => [kind, kind]), "github", { id: "new-integration-kind" });
  const configFields = h("div", {});
  const showFields = () => replaceContent(configFields, CONFIG_FIELDS[kindSelect.value].map(
    ([key, text, placeholder, hint]) => field(text, input("new-integration", { name: `config.${key}`, placeholder }), hint)));
  kindSelect.addEventListener("change", showFields);
  showFields();
  const created = h("div", {});
  return h("div", {}, created, form({ class: "subpanel", "aria-label": "Connect a tracker" }, [
    h("h3", {}, "Connect a tracker"),
    field("Tracker", kindSelect),
    field("Name", input("new-integration", { name: "name", required: true, maxlength: 100, placeholder: "Shop repository" })),
    configFields,
    field("Token", input("new-integration", { name: "token", type: "password", required: true, autocomplete: "off" }),
      "Stored encrypted; never shown again."),
    autoCreateFields("new-integration", null),
    h("label", { class: "switch" }, h("input", { type: "checkbox", name: "sync_status", checked: true }),
      " Sync status both ways"),
    h("button", { type: "submit" }, "Connect"),
  ], async (values) => {
    const integration = await api.post(`/projects/${project.id}/integrations`, {
      kind: values.kind, name: values.name, token: values.token,
      config: configOf(values.kind, values),
      auto_create: autoCreateOf(values), sync_status: Boolean(values.sync_status),
    });
    await reload();
    // The secret is shown this once, under the heading, on the new integration's card.
    const card = document.querySelector(`[aria-label=Integrations] article[aria-label="${CSS.escape(integration.name)}"]`);
    card?.after(secretNotice(integration));
  }));
}

function autoCreateFields(prefix, autoCreate) {
  return h("fieldset", { class: "switches" },
    h("legend", {}, "Create issues automatically"),
    h("label", { class: "switch" }, h("input", { type: "checkbox", name: "auto_create", checked: Boolean(autoCreate) }),
      " For new reports of"),
    field("Severity", select("auto_severities", [["", "any severity"], ...SEVERITIES.map((s) => [s, s])],
      autoCreate?.severities?.[0] || "", { id: `${prefix}-auto-severities` })),
    field("Category", select("auto_categories", [["", "any category"], ...CATEGORIES.map((c) => [c, c])],
      autoCreate?.categories?.[0] || "", { id: `${prefix}-auto-categories` })));
}

function secretNotice(integration) {
  return h("div", { class: "notice", role: "status" },
    h("p", {}, `Connected ${integration.name}. Add a webhook in the tracker with this URL and secret; the secret is shown only now.`),
    h("div", { class: "secret-row" }, h("code", { class: "webhook-url" }, integration.webhookUrl),
      copyButton(() => integration.webhookUrl, "webhook URL")),
    h("div", { class: "secret-row" }, h("code", { class: "webhook-secret" }, integration.webhookSecret),
      copyButton(() => integration.webhookSecret, "webhook secret")));
}

function integrationCard(integration, owner, member, reload) {
  const details = h("div", {});
  const status = notice("");
  status.hidden = true;
  const test = actionButton("Test connection", async () => {
    try {
      const answer = await api.post(`/integrations/${integration.id}/test`);
      // The server cleared lastError: the card is drawn again without the stale one.
      if (integration.lastError) return reload();
      status.textContent = answer.detail;
    } catch (error) {
      status.textContent = error.message;
    }
    status.hidden = false;
  }, { class: "secondary" });
  const card = h("article", { class: "subpanel integration", "aria-label": integration.name },
    h("h3", {}, `${integration.name} `, badge("tracker", integration.kind)),
    h("p", {}, describe(integration)),
    integration.lastError ? h("p", { class: "action-error" }, `Last error: ${integration.lastError}`) : null,
    h("p", {}, "Webhook URL for the tracker: "),
    h("div", { class: "secret-row" }, h("code", { class: "webhook-url" }, integration.webhookUrl),
      copyButton(() => integration.webhookUrl, "webhook URL")),
    h("div", { class: "button-row" }, test,
      actionButton("Events and calls", () => showActivity(integration, details, member), { class: "secondary" }),
      owner ? actionButton("Remove", async () => {
        if (!await confirmDialog(`Disconnect ${integration.name}? Its issues stay in the tracker.`, "Remove")) return;
        await api.delete(`/integrations/${integration.id}`);
        await reload();
      }, { class: "danger" }) : null),
    status,
    owner ? editForm(integration, reload) : null,
    details);
  return card;
}

function describe(integration) {
  const where = Object.entries(integration.config)
    .filter(([, value]) => value && !(Array.isArray(value) && !value.length))
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(", ") : value}`).join(" · ");
  const rule = integration.autoCreate
    ? `Creates issues for new ${integration.autoCreate.severities.join("/") || "any-severity"} ${integration.autoCreate.categories.join("/") || ""} reports.`
    : "Issues are created by hand.";
  return `${where}. ${rule} Status sync ${integration.syncStatus ? "on" : "off"}. Last used ${formatTime(integration.lastUsedAt)}.`;
}

function editForm(integration, reload) {
  const prefix = `integration-${integration.id}`;
  return h("details", {}, h("summary", {}, "Change"),
    form({ "aria-label": `Change ${integration.name}` }, [
      field("Name", input(prefix, { name: "name", value: integration.name, maxlength: 100 })),
      field("New token", input(prefix, { name: "token", type: "password", autocomplete: "off" }), "Empty: keep the current one. Required when the host, repository, project or e-mail changes."),
      field("Signing secret", input(prefix, { name: "webhook_secret", type: "password", autocomplete: "off" }),
        "Only for a tracker that makes its own (Linear). Empty: keep svc's."),
      autoCreateFields(prefix, integration.autoCreate),
      h("label", { class: "switch" }, h("input", { type: "checkbox", name: "sync_status", checked: integration.syncStatus }),
        " Sync status both ways"),
      h("button", { type: "submit" }, "Save"),
    ], async (values) => {
      const changes = { name: values.name, auto_create: autoCreateOf(values), sync_status: Boolean(values.sync_status) };
      if (values.token) changes.token = values.token;
      if (values.webhook_secret) changes.webhook_secret = values.webhook_secret;
      await api.patch(`/integrations/${integration.id}`, changes);
      await reload();
    }));
}

async function showActivity(integration, place, member) {
  let page = 1;
  const load = async () => {
    const [events, calls] = await Promise.all([
      api.get(`/integrations/${integration.id}/events`),
      api.get(`/integrations/${integration.id}/deliveries${query({ page, page_size: CALL_PAGE_SIZE })}`),
    ]);
    replaceContent(place,
      h("h4", {}, "Last events from the tracker"),
      events.length ? h("ul", { class: "tracker-events" }, events.map((event) =>
        h("li", {}, `${formatTime(event.receivedAt)}: ${event.outcome}`)))
        : h("p", { class: "empty" }, "None yet: add the webhook in the tracker."),
      h("h4", {}, "Calls to the tracker"),
      calls.items.length ? h("div", { class: "table-wrap" }, h("table", { class: "deliveries" },
        h("thead", {}, h("tr", {}, ["Action", "Report", "Status", "Attempts", "Last answer", "Next attempt", ""].map(
          (text) => h("th", { scope: "col" }, text)))),
        h("tbody", {}, calls.items.map((call) => h("tr", {},
          h("td", { "data-label": "Action" }, call.action),
          h("td", { "data-label": "Report" }, call.trackingId ? h("a", { href: `/reports/${call.reportId}` }, call.trackingId) : "deleted"),
          h("td", { "data-label": "Status" }, badge("delivery", call.status)),
          h("td", { "data-label": "Attempts" }, String(call.attempts)),
          h("td", { "data-label": "Last answer" }, call.lastError || (call.lastStatusCode ? `HTTP ${call.lastStatusCode}` : "")),
          h("td", { "data-label": "Next attempt" }, call.status === "pending" ? formatTime(call.nextAttemptAt) : ""),
          h("td", {}, member && call.status === "failed" ? actionButton("Retry", async () => {
            await api.post(`/integrations/${integration.id}/calls/${call.id}/retry`);
            await load();
          }, { class: "secondary" }) : null))))))
        : h("p", { class: "empty" }, "No calls in the background yet."),
      pageButtons("Call pages", calls, page, (wanted) => { page = wanted; load(); }));
  };
  await load();
}

// The report page's linked issues, and "Create issue" for those who may change the report;
// `linked()` after an issue is made (the activity shows it).
export async function issuesPanel(report, canWork, linked) {
  const panel = h("section", { class: "panel", "aria-label": "Tracker issues" });
  const integrations = await api.get(`/projects/${report.projectId}/integrations`).catch(() => []);
  const taken = new Set(report.externalIssues.map((issue) => issue.integrationId));
  const free = integrations.filter((integration) => !taken.has(integration.id));
  const show = () => replaceContent(panel,
    h("h2", {}, "Tracker issues"),
    report.externalIssues.length ? h("ul", { class: "external-issues" }, report.externalIssues.map((issue) =>
      h("li", {}, h("a", { href: issue.url, target: "_blank", rel: "noopener noreferrer" }, issue.key), " ",
        badge("tracker", issue.kind), " ", badge("issue", issue.state),
        issue.lastError ? h("span", { class: "action-error" }, ` ${issue.lastError}`) : null)))
      : h("p", { class: "empty" }, integrations.length ? "No issue yet." : "No tracker is connected to this project."),
    canWork && free.length ? form({ class: "inline", "aria-label": "Create issue" }, [
      field("Tracker", select("integration_id", free.map((integration) => [integration.id, `${integration.name} (${integration.kind})`]),
        "", { id: "issue-integration" })),
      h("button", { type: "submit" }, "Create issue"),
    ], async (values) => {
      const issue = await api.post(`/reports/${report.trackingId}/issues`, { integration_id: values.integration_id });
      report.externalIssues.push(issue);
      free.splice(free.findIndex((integration) => integration.id === issue.integrationId), 1);
      show();
      await linked();
    }) : null);
  show();
  return panel;
}
