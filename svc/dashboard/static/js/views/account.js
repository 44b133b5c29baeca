// The signed-in user's own page: password, mail notifications, and personal access tokens for
// scripts and the CLI.

import { api } from "../api.js";
import { securityPanel } from "./second-factor.js";
import {
  actionButton, appendTo, confirmDialog, copyButton, field, form, formatTime, h, notice,
  replaceContent, select,
} from "../dom.js";

const LIFETIMES = [["7", "7 days"], ["30", "30 days"], ["90", "90 days"], ["365", "1 year"]];

export async function accountView(main, context) {
  const [tokens, choices, security] = await Promise.all([
    api.get("/tokens"), api.get("/auth/me/notifications"), api.get("/auth/security")]);
  if (!context.isCurrent()) return;
  appendTo(main, 
    h("div", { class: "page-heading" }, h("h1", {}, "Account"),
      h("p", {}, `${context.user.name} <${context.user.email}>`)),
    passwordForm(),
    securityPanel(security),
    notificationsPanel(choices),
    tokensPanel(tokens));
}

const NEW_REPORT_CHOICES = [
  ["all", "Every new report"],
  ["high_and_critical", "High and critical reports"],
  ["assigned", "Only reports assigned to me"],
  ["none", "Nothing"],
];

// Each choice is saved as soon as it is made; the API's answer (or error) shows beside it.
function notificationsPanel(choices) {
  const saved = h("p", { class: "notice", role: "status", hidden: true });
  const problem = h("p", { class: "form-error", role: "alert", hidden: true });
  const save = async (choice, input) => {
    saved.hidden = problem.hidden = true;
    try {
      await api.put("/auth/me/notifications", [{ project_id: choice.projectId, new_reports: input.value }]);
      choice.newReports = input.value;
      saved.textContent = `Saved: mails about ${choice.projectName} follow your new choice.`;
      saved.hidden = false;
    } catch (error) {
      input.value = choice.newReports;
      problem.textContent = error.message;
      problem.hidden = false;
    }
  };
  return h("section", { class: "panel", "aria-label": "Mail notifications" },
    h("h2", {}, "Mail notifications"),
    h("p", {}, "Which new reports of each project you hear of by mail. Reports assigned to you, and mentions, come unless you choose nothing."),
    choices.length
      ? h("ul", { class: "members" }, choices.map((choice) => h("li", {},
        h("span", {}, choice.projectName),
        select("new_reports", NEW_REPORT_CHOICES, choice.newReports, {
          "aria-label": `Mails about ${choice.projectName}`,
          onchange: (event) => save(choice, event.target),
        }))))
      : h("p", { class: "empty" }, "You are in no project yet."),
    saved, problem);
}

function passwordForm() {
  const done = notice("");
  done.hidden = true;
  return form({ class: "panel", "aria-label": "Change password" }, [
    h("h2", {}, "Change password"),
    field("Current password", h("input", { name: "current_password", type: "password", autocomplete: "current-password", required: true })),
    field("New password", h("input", { name: "new_password", type: "password", autocomplete: "new-password", minlength: 8, maxlength: 128, required: true }),
      "At least 8 characters. Your other sessions are signed out."),
    h("button", { type: "submit" }, "Change password"),
    done,
  ], async (values, element) => {
    await api.post("/auth/password", values);
    element.reset();
    done.textContent = "Password changed. Other sessions have been signed out.";
    done.hidden = false;
  });
}

function tokensPanel(tokens) {
  const panel = h("section", { class: "panel", "aria-label": "Personal access tokens" });
  let created = null;
  const show = () => replaceContent(panel,
    h("h2", {}, "Personal access tokens"),
    h("p", {}, "For scripts and the CLI: send as ", h("code", {}, "Authorization: Bearer <token>"), "."),
    created ? h("div", { class: "new-token", role: "status" },
      h("p", {}, `Your new token "${created.name}". Copy it now: it is shown only once.`),
      h("div", { class: "secret-row" }, h("code", { class: "token-value" }, created.token),
        copyButton(() => created.token, "token")),
      created.scopes ? agentCommands(created) : null) : null,
    createForm,
    h("p", {}, "A coding agent (Claude Code, Cursor, Codex) reads reports with a token that may only read: ",
      actionButton("Token for a coding agent", async () => {
        created = await api.post("/tokens", { name: "coding agent", expires_in_days: 90, scopes: ["reports:read"] });
        tokens.unshift(created);
        show();
      }), " (docs/mcp.md)."),
    tokens.length ? tokenTable() : h("p", { class: "empty" }, "No tokens yet: create one above for your scripts."));
  // What to paste: the CLI's sign-in with the token, then the agent's one line (docs/mcp.md).
  const agentCommands = (token) => {
    // The token is pasted at the prompt, never written on a command line (a shell's history).
    const commands = `svc login --url ${location.origin}\nclaude mcp add svc -- svc mcp`;
    return h("div", {}, h("p", {}, `Read only (${token.scopes.join(", ")}). For an agent, run these, `
      + "pasting the token above when svc login asks for it:"),
      h("div", { class: "secret-row" }, h("pre", { class: "agent-commands" }, commands),
        copyButton(() => commands, "commands")),
      h("p", { class: "hint" }, `Or over HTTP: ${location.origin}/mcp with Authorization: Bearer <token>.`));
  };
  const tokenTable = () => h("div", { class: "table-wrap" }, h("table", { class: "tokens" },
    h("thead", {}, h("tr", {}, ["Name", "Starts with", "Created", "Last used", "Expires", ""].map(
      (text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, tokens.map((token) => h("tr", {},
      h("td", { "data-label": "Name" }, token.name, token.scopes ? h("small", {}, ` (${token.scopes.join(", ")})`) : null),
      h("td", { "data-label": "Starts with" }, h("code", {}, `${token.tokenHint}…`)),
      h("td", { "data-label": "Created" }, formatTime(token.createdAt)),
      h("td", { "data-label": "Last used" }, formatTime(token.lastUsedAt)),
      h("td", { "data-label": "Expires" }, formatTime(token.expiresAt)),
      h("td", {}, actionButton("Revoke", () => revoke(token), { "aria-label": `Revoke ${token.name}` })))))));
  const revoke = async (token) => {
    if (!await confirmDialog(`Revoke "${token.name}"? Scripts using it stop working at once.`, "Revoke")) return;
    await api.delete(`/tokens/${token.id}`);
    tokens.splice(tokens.indexOf(token), 1);
    if (created?.id === token.id) created = null;
    show();
  };
  const createForm = form({ "aria-label": "Create a token", class: "inline" }, [
    field("Token name", h("input", { name: "name", required: true, maxlength: 100, placeholder: "laptop CLI" })),
    field("Expires in", select("expires_in_days", LIFETIMES, "30")),
    h("button", { type: "submit" }, "Create token"),
  ], async (values, element) => {
    created = await api.post("/tokens", { name: values.name, expires_in_days: Number(values.expires_in_days) });
    tokens.unshift(created);
    element.reset();
    show();
  });
  show();
  return panel;
}
