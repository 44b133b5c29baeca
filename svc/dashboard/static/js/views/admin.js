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
  const [status, users, usage, health] = await Promise.all([
    api.get("/admin/status"), api.get("/admin/users"), api.get("/admin/usage"), api.get("/admin/health")]);
  if (!context.isCurrent()) return;
  const table = h("table", { class: "users" });
  const show = () => replaceContent(table,
    h("thead", {}, h("tr", {}, ...["Name", "E-mail", "Status", "Signs in with", "Last sign-in", ""].map((text) => h("th", {}, text)))),
    h("tbody", {}, users.map((user) => h("tr", {},
      h("td", { "data-label": "Name" }, user.name),
      h("td", { "data-label": "E-mail" }, user.email),
      h("td", { "data-label": "Status" }, [user.active ? "active" : "deactivated", user.isAdmin ? " · admin" : ""].join("")),
      h("td", { "data-label": "Signs in with" }, signsInWith(user)),
      h("td", { "data-label": "Last sign-in" }, user.lastSignInAt ? formatTime(user.lastSignInAt) : "never"),
      h("td", { "data-label": "" },
        actionButton(user.active ? "Deactivate" : "Reactivate", () => toggleActive(user),
          { "aria-label": `${user.active ? "Deactivate" : "Reactivate"} ${user.name}` }),
        actionButton(user.isAdmin ? "Remove admin" : "Make admin", () => change(user, { is_admin: !user.isAdmin }),
          { "aria-label": `${user.isAdmin ? "Remove admin from" : "Make admin"} ${user.name}` }),
        user.active ? actionButton("Send reset link", () => sendReset(user),
          { "aria-label": `Send a reset link to ${user.name}` }) : null,
        user.secondFactors.length ? actionButton("Reset second factors", () => resetFactors(user),
          { "aria-label": `Reset the second factors of ${user.name}` }) : null)))));
  const resetFactors = async (user) => {
    const next = status.secondFactorRequired
      ? "Their next password sign-in asks them to enrol an authenticator app again (this svc requires one)."
      : "Their next sign-in needs the password alone.";
    if (!await confirmDialog(`Remove every second factor and recovery code of ${user.name}? ${next}`, "Reset")) return;
    await api.delete(`/admin/users/${user.id}/factors`);
    user.secondFactors = [];
    show();
    sent.textContent = `${user.name}'s second factors are removed.`;
    sent.hidden = false;
    sent.focus?.();
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
    healthPanel(health),
    mailPanel(status),
    instanceUsagePanel(usage),
    h("section", { class: "panel", "aria-label": "Accounts" }, h("h2", {}, "Accounts"), sent,
      h("div", { class: "table-wrap" }, table)),
    auditPanel("/admin/audit", users));
}

function signsInWith(user) {
  const ways = [user.singleSignOn ? "single sign-on" : "password"];
  const names = { totp: "authenticator app", passkey: "passkey" };
  if (user.secondFactors.length) ways.push(`+ ${user.secondFactors.map((kind) => names[kind] || kind).join(", ")}`);
  return ways.join(" ");
}

function mailPanel(status) {
  const failures = status.mailsFailed ? ` ${status.mailsFailed} failed after every retry.` : "";
  return h("section", { class: "panel", "aria-label": "Mail" }, h("h2", {}, "Mail"),
    status.mailEnabled
      ? h("p", {}, `Mail is on, sent as ${status.mailFrom}. ${status.mailsPending} waiting.${failures}`)
      : h("p", { class: "caution" }, "Mail is off: no SVC_SMTP_URL is set. Invitations, reset links and notifications are written to the scheduler's log instead; set SVC_SMTP_URL and SVC_PUBLIC_URL to send them."),
    status.mailEnabled && status.lastMailError
      ? h("p", { class: "caution" }, `The last mail that went wrong: ${status.lastMailError}`) : null,
    h("p", {}, `Registration is ${status.registration}.`));
}

// What /admin/health knows, in words (docs/deployment.md): the active scheduler, what waits in
// the outboxes, the store and the database.
function healthPanel(health) {
  const { scheduler, outbox, storage, database } = health;
  const rows = [
    ["Scheduler", scheduler.holder
      ? `${scheduler.holder} is active since ${formatTime(scheduler.since)} (lease renewed ${formatTime(scheduler.renewedAt)})`
      : "none is active: webhooks, mails and tracker calls wait (is a scheduler process running?)"],
    ["Standing by", scheduler.standbys.length
      ? scheduler.standbys.map((standby) => `${standby.holder} (since ${formatTime(standby.since)})`).join("; ")
      : "none: if the active scheduler stops, nothing takes over until one starts"],
    ["Waiting", `${outbox.webhooksPending} webhook deliveries, ${outbox.mailsPending} mails, `
      + `${outbox.trackerCallsPending} tracker calls, ${outbox.eventsPending} new reports' effects, `
      + `${outbox.notificationsPending} notifications`
      + (outbox.oldestPendingAt ? `, the oldest since ${formatTime(outbox.oldestPendingAt)}` : "")],
    ["Reporter mails held back", `${outbox.reporterMailsLimited} in the last 24 hours (over an address's daily limits)`],
    ["Last mail error", outbox.lastMailError ? `${outbox.lastMailError} (a mail queued ${formatTime(outbox.lastMailErrorAt)})` : "none"],
    ["Signatures to make again", `${outbox.signaturesOutdated} (made by an older release's rules; the scheduler redoes them in batches)`],
    ["Object store", `${storage.kind}: ${storage.ok ? "answering" : "not answering"}`],
    ["Database", `${database.kind}: ${database.ok ? "answering" : "not answering"}`],
  ];
  return h("section", { class: "panel", "aria-label": "Health" }, h("h2", {}, "Health"),
    h("dl", { class: "facts" }, rows.flatMap(([term, said]) => [h("dt", {}, term), h("dd", {}, said)])));
}
