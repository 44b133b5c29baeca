// The instance's administration, for its administrators: whether mail goes out, and every
// account with its last sign-in; deactivate, reactivate, grant administration, send a reset link;
// the instance's audit log.

import { api } from "../api.js";
import { actionButton, appendTo, confirmDialog, formatTime, h, replaceContent } from "../dom.js";
import { auditPanel } from "./audit.js";
import { instanceUsagePanel } from "./data.js";

export async function adminView(main, context) {
  if (!context.user.isAdmin) {
    appendTo(main, h("section", { class: "panel" }, h("h1", {}, "Administration"),
      h("p", { role: "alert" }, "Only administrators of this svc see this page.")));
    return;
  }
  const [status, users, usage] = await Promise.all([
    api.get("/admin/status"), api.get("/admin/users"), api.get("/admin/usage")]);
  if (!context.isCurrent()) return;
  const table = h("table", { class: "users" });
  const show = () => replaceContent(table,
    h("thead", {}, h("tr", {}, ...["Name", "E-mail", "Status", "Last sign-in", ""].map((text) => h("th", {}, text)))),
    h("tbody", {}, users.map((user) => h("tr", {},
      h("td", { "data-label": "Name" }, user.name),
      h("td", { "data-label": "E-mail" }, user.email),
      h("td", { "data-label": "Status" }, [user.active ? "active" : "deactivated", user.isAdmin ? " · admin" : ""].join("")),
      h("td", { "data-label": "Last sign-in" }, user.lastSignInAt ? formatTime(user.lastSignInAt) : "never"),
      h("td", { "data-label": "" },
        actionButton(user.active ? "Deactivate" : "Reactivate", () => toggleActive(user),
          { "aria-label": `${user.active ? "Deactivate" : "Reactivate"} ${user.name}` }),
        actionButton(user.isAdmin ? "Remove admin" : "Make admin", () => change(user, { is_admin: !user.isAdmin }),
          { "aria-label": `${user.isAdmin ? "Remove admin from" : "Make admin"} ${user.name}` }),
        user.active ? actionButton("Send reset link", () => sendReset(user),
          { "aria-label": `Send a reset link to ${user.name}` }) : null,
        actionButton("Reset second factors", () => resetFactors(user),
          { "aria-label": `Reset the second factors of ${user.name}` }))))));
  const resetFactors = async (user) => {
    if (!await confirmDialog(
      `Remove every second factor and recovery code of ${user.name}? Their next sign-in needs the password alone.`, "Reset")) return;
    await api.delete(`/admin/users/${user.id}/factors`);
    sent.textContent = `${user.name}'s second factors are removed.`;
    sent.hidden = false;
  };
  const change = async (user, changes) => {
    Object.assign(user, await api.patch(`/admin/users/${user.id}`, changes));
    show();
  };
  const toggleActive = async (user) => {
    if (user.active && !await confirmDialog(
      `Deactivate ${user.name}? They are signed out at once and their tokens stop working.`, "Deactivate")) return;
    await change(user, { active: !user.active });
  };
  const sendReset = async (user) => {
    await api.post(`/admin/users/${user.id}/reset-link`);
    sent.textContent = status.mailEnabled
      ? `A reset link is on its way to ${user.email}.`
      : `Mail is off: the reset link for ${user.email} is in the scheduler's log.`;
    sent.hidden = false;
  };
  const sent = h("p", { class: "notice", role: "status", hidden: true });
  show();
  appendTo(main, 
    h("div", { class: "page-heading" }, h("h1", {}, "Administration")),
    mailPanel(status),
    instanceUsagePanel(usage),
    h("section", { class: "panel", "aria-label": "Accounts" }, h("h2", {}, "Accounts"), sent,
      h("div", { class: "table-wrap" }, table)),
    auditPanel("/admin/audit", users));
}

function mailPanel(status) {
  const failures = status.mailsFailed
    ? ` ${status.mailsFailed} mail(s) failed after every retry; the scheduler's log says why.` : "";
  return h("section", { class: "panel", "aria-label": "Mail" }, h("h2", {}, "Mail"),
    status.mailEnabled
      ? h("p", {}, `Mail is on, sent as ${status.mailFrom}. ${status.mailsPending} waiting.${failures}`)
      : h("p", { class: "caution" }, "Mail is off: no SVC_SMTP_URL is set. Invitations, reset links and notifications are written to the scheduler's log instead; set SVC_SMTP_URL and SVC_PUBLIC_URL to send them."),
    h("p", {}, `Registration is ${status.registration}.`));
}
