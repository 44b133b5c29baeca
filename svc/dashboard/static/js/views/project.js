// A project's settings page: settings, API key and embed snippet, members, webhook secret, the
// webhook delivery log and the issue trackers; for owners, the project's audit log. Members and viewers see it all
// but the secret and the audit log, change nothing owner-only, and may leave.

import { api, query } from "../api.js";
import {
  actionButton, appendTo, badge, confirmDialog, copyButton, field, form, formatTime, h, notice,
  pageButtons, replaceContent, select,
} from "../dom.js";
import { REPORTER_LANGUAGES, ROLES, WEBHOOK_FORMATS, WIDGET_POSITIONS, WIDGET_SWITCHES } from "../constants.js";
import { auditPanel } from "./audit.js";
import { dataPanel } from "./data.js";
import { integrationsPanel } from "./integrations.js";
import { reporterUpdatesPanel } from "./reporter-updates.js";
import { reproSettingsPanel } from "./reproductions.js";
import { snippetBlock } from "./snippet.js";

const DELIVERY_PAGE_SIZE = 10;

export async function projectView(main, context) {
  const projectId = context.params[0];
  const [project, members, features] = await Promise.all([
    api.get(`/projects/${encodeURIComponent(projectId)}`),
    api.get(`/projects/${encodeURIComponent(projectId)}/members`),
    api.get("/features"),
  ]);
  if (!context.isCurrent()) return;
  const owner = project.role === "owner";
  const heading = h("h1", {}, project.name);
  const keyPanel = h("section", { class: "panel", "aria-label": "API key" });
  const snippetPanel = h("section", { class: "panel", "aria-label": "Embed snippet" });
  const showKey = () => {
    replaceContent(keyPanel, ...apiKeyContent(project, owner, rotateKey));
    replaceContent(snippetPanel, h("h2", {}, "Embed snippet"),
      h("p", {}, "Paste this into your web app's pages: it adds the bug reporter, which captures the page's console, network requests and clicks and files reports into this project."),
      snippetBlock(project),
      h("p", {}, h("a", { href: `/projects/${project.id}/try-widget` }, "Try the widget"),
        " on a page of this dashboard. Its options, JavaScript API and exactly what it captures are in ",
        h("a", { href: "/docs/widget.md", target: "_blank", rel: "noopener" }, "the widget's documentation"), "."));
  };
  const rotateKey = async () => {
    if (!await confirmDialog("Rotate the API key? The current key stops working at once; widgets using it must be updated.", "Rotate key")) return;
    Object.assign(project, await api.post(`/projects/${project.id}/rotate-api-key`));
    showKey();
    keyPanel.append(notice("A new API key is in force."));
  };
  showKey();
  // [anchor, the navigation's label, the section]: a new part of the page is one more line.
  const sections = [
    ["settings", "Settings", settingsForm(project, owner, heading)],
    ["api-key", "API key", keyPanel],
    ["snippet", "Embed snippet", snippetPanel],
    ["widget", "Widget", widgetForm(project, owner, features)],
    ["members", "Members", membersPanel(project, members, owner, context)],
    owner ? ["invitations", "Invitations", invitationsPanel(project)] : null,
    owner ? ["webhook-secret", "Webhook secret", secretPanel(project)] : null,
    ["deliveries", "Webhook deliveries", deliveryPanel(project)],
    ["integrations", "Integrations", integrationsPanel(project)],
    ["reporter-updates", "Reporter updates", reporterUpdatesPanel(project, owner)],
    ["staging", "On staging", reproSettingsPanel(project, owner)],
    ["data", "Data and retention", dataPanel(project, owner)],
    owner ? ["audit", "Audit log", auditPanel(`/projects/${project.id}/audit`,
      members.map((member) => ({ id: member.userId, name: member.name })))] : null,
    owner ? ["delete", "Delete project", deletePanel(project, context)] : null,
  ].filter(Boolean);
  appendTo(main,
    h("p", { class: "breadcrumb" }, h("a", { href: "/projects" }, "Projects")),
    h("div", { class: "page-heading" }, heading,
      h("p", {}, `Tracking prefix ${project.trackingPrefix} · `,
        h("a", { href: `/reports?project_id=${project.id}` }, "Reports"))),
    sectionedPage(sections, context));
}

// The page's sections beside a navigation of addressable anchors (#members, #audit...): on a
// wide screen a column that stays in view, on a phone a row that scrolls sideways. The link of
// the section asked for is marked current; an address with an anchor opens at its section.
function sectionedPage(sections, context) {
  const links = sections.map(([anchor, text]) => h("a", { href: `#${anchor}` }, text));
  const nav = h("nav", { class: "section-nav", "aria-label": "Sections of this page" },
    h("ul", {}, links.map((link) => h("li", {}, link))));
  for (const [anchor, , section] of sections) section.id = anchor;
  const mark = () => {
    const wanted = decodeURIComponent(location.hash.slice(1));
    links.forEach((link, index) => {
      if (sections[index][0] === wanted) link.setAttribute("aria-current", "location");
      else link.removeAttribute("aria-current");
    });
    return sections.find(([anchor]) => anchor === wanted)?.[2];
  };
  window.addEventListener("hashchange", mark);
  context.onLeave(() => window.removeEventListener("hashchange", mark));
  // The page was built after the browser looked for the anchor: go to it now.
  queueMicrotask(() => mark()?.scrollIntoView());
  return h("div", { class: "sectioned" }, nav,
    h("div", { class: "sections" }, sections.map(([, , section]) => section)));
}

function apiKeyContent(project, owner, rotate) {
  return [
    h("h2", {}, "API key"),
    h("p", {}, "Widgets and integrations send reports with this key. It is publishable: it ships in your web app."),
    h("div", { class: "secret-row" }, h("code", { class: "api-key" }, project.apiKey),
      copyButton(() => project.apiKey, "API key")),
    owner ? actionButton("Rotate API key", rotate) : null,
  ];
}

function settingsForm(project, owner, heading) {
  const settings = project.settings;
  const saved = notice("");
  saved.hidden = true;
  const format = settings.webhookFormat && settings.webhookUrl ? settings.webhookFormat : "";
  return form({ class: "panel", "aria-label": "Settings" }, [
    h("h2", {}, "Settings"),
    field("Name", h("input", { name: "name", value: project.name, required: true, maxlength: 100, disabled: !owner })),
    field("Webhook URL", h("input", { name: "settings.webhook_url", type: "url", value: settings.webhookUrl || "",
      placeholder: owner ? "https://example.com/hooks/svc" : "Shown to owners only", disabled: !owner }),
    owner ? "Every new or changed report is sent here, signed. Leave empty for no webhook."
      : "A chat webhook's address is itself a credential, so only owners see it."),
    field("Webhook format", select("settings.webhook_format", WEBHOOK_FORMATS, format, { disabled: !owner }),
      `In force: ${settings.webhookFormat}.`),
    field("Allowed origins", h("textarea", { name: "settings.allowed_origins", rows: 3, disabled: !owner,
      placeholder: "https://app.example.com" }, settings.allowedOrigins.join("\n")),
    "One origin per line. Empty: reports are accepted from any origin."),
    owner ? h("button", { type: "submit" }, "Save settings") : h("p", { class: "hint" }, "Only the owner can change the settings."),
    saved,
  ], async (values) => {
    const updated = await api.patch(`/projects/${project.id}`, {
      name: values.name,
      settings: {
        webhook_url: values["settings.webhook_url"].trim() || null,
        webhook_format: values["settings.webhook_format"] || null,
        allowed_origins: values["settings.allowed_origins"].split(/\s+/).filter(Boolean),
      },
    });
    Object.assign(project, updated);
    heading.textContent = project.name;
    saved.textContent = `Settings saved. Webhook format in force: ${project.settings.webhookFormat}.`;
    saved.hidden = false;
  });
}

// Replay's switch and window (docs/replay.md); off, with the reason, where rrweb is not installed.
function replayFields(widget, owner, replay) {
  const off = !owner || !replay.available;
  return h("fieldset", { class: "switches" }, h("legend", {}, "Replay"),
    h("label", {}, h("input", { type: "checkbox", name: "enable_replay", checked: widget.enableReplay && replay.available,
      disabled: off }), " Replay of the last seconds before a report (inputs and passwords always masked)"),
    field("Seconds kept", h("input", { name: "replay_seconds", type: "number", min: 10, max: 300,
      value: widget.replaySeconds, required: true, disabled: off })),
    h("label", {}, h("input", { type: "checkbox", name: "replay_mask_all_text", checked: widget.replayMaskAllText,
      disabled: off }), " Mask all of the page's text (elements with data-svc-unmask stay readable)"),
    replay.available ? null : h("p", { class: "hint" }, `Replay is unavailable: ${replay.reason}`));
}

function widgetForm(project, owner, features) {
  const widget = project.settings.widget;
  const saved = notice("");
  saved.hidden = true;
  const text = (label, name, value) => field(label,
    h("input", { name, value, required: true, maxlength: 60, disabled: !owner }));
  return form({ class: "panel", "aria-label": "Widget" }, [
    h("h2", {}, "Widget"),
    text("Button text", "button_text", widget.buttonText),
    text("Dialog title", "modal_title", widget.modalTitle),
    colourField(widget.primaryColor, owner),
    field("Position", select("position", WIDGET_POSITIONS, widget.position, { disabled: !owner })),
    field("Reporters' language", select("locale", REPORTER_LANGUAGES.some(([tag]) => tag === widget.locale)
      ? REPORTER_LANGUAGES : [...REPORTER_LANGUAGES, [widget.locale, widget.locale]], widget.locale, { disabled: !owner }),
    "What the mails and the status page say to reporters; each one's own by default."),
    field("Logo URL", h("input", { name: "logo_url", type: "url", value: widget.logoUrl || "",
      placeholder: "https://example.com/logo.svg", disabled: !owner }),
    "Shown on the button and in the dialog; your site's Content-Security-Policy must allow it. Empty: no logo."),
    h("fieldset", { class: "switches" }, h("legend", {}, "What the widget offers and captures"),
      WIDGET_SWITCHES.map(([name, key, label]) => h("label", {},
        h("input", { type: "checkbox", name, checked: widget[key], disabled: !owner }), " ", label))),
    replayFields(widget, owner, features.replay),
    field("Test id attribute", h("input", { name: "test_id_attribute", value: widget.testIdAttribute,
      required: true, maxlength: 50, disabled: !owner }),
    "The attribute your pages give elements for tests; the widget records it and the generated test finds elements by it."),
    owner ? h("button", { type: "submit" }, "Save widget") : h("p", { class: "hint" }, "Only the owner can change the widget."),
    saved,
  ], async (values) => {
    const settings = {
      button_text: values.button_text,
      modal_title: values.modal_title,
      primary_color: values.primary_color,
      position: values.position,
      locale: values.locale,
      logo_url: values.logo_url.trim() || null,
      test_id_attribute: values.test_id_attribute.trim(),
    };
    for (const [name] of WIDGET_SWITCHES) settings[name] = values[name] === "on";
    if (features.replay.available) {
      settings.enable_replay = values.enable_replay === "on";
      settings.replay_seconds = Number(values.replay_seconds);
      settings.replay_mask_all_text = values.replay_mask_all_text === "on";
    }
    Object.assign(project, await api.patch(`/projects/${project.id}`, { settings: { widget: settings } }));
    saved.textContent = "Widget saved. Pages that load it pick it up on their next visit.";
    saved.hidden = false;
  });
}

// A swatch to pick with, and the hex value beside it, kept in step.
function colourField(value, owner) {
  const picker = h("input", { name: "primary_color", type: "color", value, disabled: !owner });
  const shown = h("output", { for: "field-primary_color" }, value);
  picker.addEventListener("input", () => { shown.textContent = picker.value; });
  const wrapper = field("Colour", picker);
  const row = h("div", { class: "colour" });
  picker.replaceWith(row);
  row.append(picker, shown);
  return wrapper;
}

function membersPanel(project, members, owner, context) {
  const roleOptions = ROLES.map((role) => [role, role]);
  const panel = h("section", { class: "panel", "aria-label": "Members" });
  const problem = h("p", { class: "form-error", role: "alert", hidden: true });
  const show = () => replaceContent(panel,
    h("h2", {}, "Members"),
    h("p", {}, "Owners change everything; members triage reports; viewers only read."),
    h("ul", { class: "members" }, members.map((member) => h("li", {},
      h("span", {}, member.name, " ", h("small", {}, `<${member.email}>`)),
      owner
        ? select("role", roleOptions, member.role,
          { "aria-label": `Role of ${member.name}`, onchange: (event) => changeRole(member, event.target) })
        : h("span", {}, member.role),
      member.userId === context.user.id
        ? actionButton("Leave project", leave)
        : owner ? actionButton("Remove", () => remove(member), { "aria-label": `Remove ${member.name}` }) : null))),
    problem);
  const changeRole = async (member, input) => {
    problem.hidden = true;
    try {
      Object.assign(member, await api.patch(`/projects/${project.id}/members/${member.userId}`, { role: input.value }));
    } catch (error) {
      input.value = member.role;
      problem.textContent = error.message;
      problem.hidden = false;
      return;
    }
    if (member.userId === context.user.id) context.navigate(`/projects/${project.id}`, { replace: true });
  };
  const remove = async (member) => {
    if (!await confirmDialog(`Remove ${member.name} from ${project.name}?`, "Remove")) return;
    await api.delete(`/projects/${project.id}/members/${member.userId}`);
    members.splice(members.indexOf(member), 1);
    show();
  };
  const leave = async () => {
    problem.hidden = true;
    // The service refuses the last owner's leaving (409); say so before asking, not after.
    if (!members.some((member) => member.role === "owner" && member.userId !== context.user.id)
        && project.role === "owner") {
      problem.textContent = `You are the only owner of ${project.name}, so you cannot leave it: ` +
        "make another member an owner first, or delete the project.";
      problem.hidden = false;
      return;
    }
    if (!await confirmDialog(`Leave ${project.name}? You lose access to its reports.`, "Leave")) return;
    try {
      await api.delete(`/projects/${project.id}/members/${context.user.id}`);
    } catch (error) {
      problem.textContent = error.message;
      problem.hidden = false;
      return;
    }
    context.navigate("/projects");
  };
  show();
  return panel;
}

// People join by invitation only: the owner invites an address, the link goes out by mail and
// is shown once here, so that it can be passed on when the service sends no mail.
function invitationsPanel(project) {
  const base = `/projects/${project.id}/invitations`;
  const panel = h("section", { class: "panel", "aria-label": "Invitations" });
  const list = h("ul", { class: "members" });
  const waiting = h("p", { class: "empty", hidden: true }, "No invitations waiting.");
  const sent = h("div", { role: "status" });
  const problem = h("p", { class: "form-error", role: "alert", hidden: true });
  const showLink = (invitation, what) => replaceContent(sent, h("p", { class: "notice" },
    `${what} ${invitation.email}. The link, valid until ${formatTime(invitation.expiresAt)}: `,
    h("code", {}, invitation.url), " ", copyButton(() => invitation.url, "invitation link")));
  const load = async () => {
    const pending = await api.get(base);
    replaceContent(list, ...pending.map((invitation) => h("li", {},
      h("span", {}, invitation.email, " · ", invitation.role, " · ",
        new Date(invitation.expiresAt) < new Date()
          ? "expired" : `expires ${formatTime(invitation.expiresAt)}`),
      actionButton("Resend", () => act(() => api.post(`/invitations/${invitation.id}/resend`), "Sent again to"),
        { "aria-label": `Resend the invitation to ${invitation.email}` }),
      actionButton("Revoke", () => act(() => api.delete(`/invitations/${invitation.id}`)),
        { "aria-label": `Revoke the invitation to ${invitation.email}` }))));
    list.hidden = pending.length === 0;
    waiting.hidden = pending.length > 0;
  };
  const act = async (request, what) => {
    problem.hidden = true;
    try {
      const invitation = await request();
      if (what) showLink(invitation, what);
    } catch (error) {
      problem.textContent = error.message;
      problem.hidden = false;
    }
    await load();
  };
  const inviteForm = form({ "aria-label": "Invite someone", class: "inline" }, [
    field("Invite by e-mail", h("input", { name: "email", type: "email", required: true })),
    field("Role", select("role", ROLES.map((role) => [role, role]), "member")),
    h("button", { type: "submit" }, "Send invitation"),
    h("small", { class: "hint" },
      "They get a link, valid for 7 days, that creates their account if they have none."),
  ], async (values, element) => {
    showLink(await api.post(base, values), "Invitation sent to");
    element.reset();
    await load();
  });
  panel.append(h("h2", {}, "Invitations"), inviteForm, sent, problem,
    h("h3", {}, "Pending"), list, waiting);
  load();
  return panel;
}

function secretPanel(project) {
  const panel = h("section", { class: "panel", "aria-label": "Webhook secret" });
  let revealed = false;
  const show = () => replaceContent(panel,
    h("h2", {}, "Webhook secret"),
    h("p", {}, "Receivers verify the webhook-signature header with this secret (Standard Webhooks). Only you, the owner, can see it."),
    h("div", { class: "secret-row" },
      h("code", { class: "webhook-secret" }, revealed ? project.webhookSecret : "•".repeat(24)),
      h("button", { type: "button", class: "secondary", onclick: () => { revealed = !revealed; show(); } },
        revealed ? "Hide" : "Reveal"),
      revealed ? copyButton(() => project.webhookSecret, "webhook secret") : null),
    actionButton("Rotate webhook secret", rotate));
  const rotate = async () => {
    if (!await confirmDialog("Rotate the webhook secret? Receivers must be given the new one.", "Rotate secret")) return;
    Object.assign(project, await api.post(`/projects/${project.id}/rotate-webhook-secret`));
    revealed = true;
    show();
  };
  show();
  return panel;
}

function deliveryPanel(project) {
  const panel = h("section", { class: "panel", "aria-label": "Webhook deliveries" });
  let page = 1;
  const load = async () => {
    const log = await api.get(`/projects/${project.id}/webhook-deliveries${query({ page, page_size: DELIVERY_PAGE_SIZE })}`);
    replaceContent(panel,
      h("h2", {}, "Webhook deliveries"),
      h("button", { type: "button", class: "secondary", onclick: load }, "Refresh"),
      log.items.length ? deliveryTable(project, log.items, load) : h("p", { class: "empty" },
        project.settings.webhookUrl || project.role !== "owner"
          ? "No deliveries yet: one is made for every new or changed report."
          : "No deliveries yet: set a webhook URL above to have reports pushed to it."),
      pageButtons("Delivery pages", log, page, (wanted) => { page = wanted; load(); }));
  };
  load().catch((error) => replaceContent(panel, h("h2", {}, "Webhook deliveries"), h("p", { role: "alert" }, error.message)));
  return panel;
}

function deliveryTable(project, items, reload) {
  return h("div", { class: "table-wrap" }, h("table", { class: "deliveries" },
    h("thead", {}, h("tr", {}, ["Event", "Report", "Status", "Attempts", "Last answer", "Next attempt", "Created", ""].map(
      (text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, items.map((delivery) => h("tr", {},
      h("td", { "data-label": "Event" }, delivery.event),
      h("td", { "data-label": "Report" }, delivery.trackingId ? h("a", { href: `/reports/${delivery.reportId}` }, delivery.trackingId) : "deleted"),
      h("td", { "data-label": "Status" }, badge("delivery", delivery.status)),
      h("td", { "data-label": "Attempts" }, String(delivery.attempts)),
      h("td", { "data-label": "Last answer" },
        delivery.lastStatusCode ? `HTTP ${delivery.lastStatusCode}` : "", delivery.lastError ? ` ${delivery.lastError}` : ""),
      h("td", { "data-label": "Next attempt" }, delivery.status === "pending" ? formatTime(delivery.nextAttemptAt) : ""),
      h("td", { "data-label": "Created" }, formatTime(delivery.createdAt)),
      h("td", {}, actionButton("Redeliver", async () => {
        await api.post(`/projects/${project.id}/webhook-deliveries/${delivery.id}/redeliver`);
        await reload();
      })))))));
}

function deletePanel(project, context) {
  return h("section", { class: "panel danger-zone", "aria-label": "Delete project" },
    h("h2", {}, "Delete project"),
    h("p", {}, "Deletes the project with all its reports, screenshots and webhook deliveries."),
    actionButton("Delete project", async () => {
      if (!await confirmDialog(`Delete ${project.name} and all its reports? This cannot be undone.`, "Delete project")) return;
      await api.delete(`/projects/${project.id}`);
      context.navigate("/projects", { replace: true });
    }, { class: "danger" }));
}
