// A report's timeline: its creation, each change, and the comments in between, oldest first;
// and the comment box. Comments are plain text: links become anchors made by our code, the
// rest stays text, never markup.

import { api } from "../api.js";
import { actionButton, confirmDialog, form, formatTime, h, label, replaceContent } from "../dom.js";

const LINK = /https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]]/g;

export function linkified(text) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(LINK)) {
    parts.push(text.slice(last, match.index),
      h("a", { href: match[0], rel: "noopener noreferrer nofollow", target: "_blank" }, match[0]));
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}

export async function timelinePanel(report, project, members, user) {
  const panel = h("section", { class: "panel", "aria-label": "Activity" });
  const names = new Map(members.map((member) => [member.userId, member.name]));
  const canWrite = project.role !== "viewer";
  let entries = [];
  let comments = new Map();
  const load = async () => {
    const [activity, list] = await Promise.all([
      api.get(`/reports/${report.id}/activity`),
      api.get(`/reports/${report.id}/comments`),
    ]);
    entries = activity;
    comments = new Map(list.map((comment) => [comment.id, comment]));
    show();
  };
  const describeValue = (field, value) => {
    if (field === "duplicateOf") return value ?? "none";
    if (value === null || value === "") return "nobody";
    if (field === "assigneeId") return names.get(value) || "someone who left";
    if (["status", "severity", "category"].includes(field)) return label(value);
    return String(value);
  };
  const changeText = (changes) => Object.entries(changes).map(([field, change]) =>
    ["title", "description"].includes(field)
      ? `${field === "title" ? "the title" : "the description"}`
      : `${{ assigneeId: "assignee", duplicateOf: "duplicate of" }[field] || field} ${describeValue(field, change.from)} → ${describeValue(field, change.to)}`,
  ).join(", ");
  const commentItem = (entry) => {
    const comment = comments.get(entry.commentId);
    if (!comment) return null; // deleted: its deletion says so below
    const mine = !comment.fromReporter && comment.author?.id === user.id;
    const who = comment.fromReporter ? "The reporter" : comment.author?.name || "A former member";
    const body = h("p", { class: "comment-body" }, ...linkified(comment.body));
    const actions = h("span", { class: "comment-actions" },
      mine && canWrite ? actionButton("Edit", () => startEdit(comment, body),
        { "aria-label": "Edit your comment" }) : null,
      (mine && canWrite) || project.role === "owner" ? actionButton("Delete", () => remove(comment),
        { "aria-label": `Delete the comment of ${comment.author?.name || "a former member"}` }) : null);
    // What the reporter can see (a public comment, or their own) says so, in words and colour.
    const seen = comment.fromReporter ? " wrote on the status page" : comment.public ? " replied to the reporter" : " commented";
    return h("li", { class: comment.public ? "timeline-comment public" : "timeline-comment" },
      h("p", { class: "comment-head" }, h("strong", {}, who), seen, " · ",
        h("time", {}, formatTime(comment.createdAt)),
        comment.updatedAt !== comment.createdAt ? " (edited)" : "", " ", actions),
      body);
  };
  const startEdit = (comment, body) => {
    const editor = form({ "aria-label": "Edit the comment" }, [
      h("textarea", { name: "body", rows: 3, maxlength: 10000, required: true, "aria-label": "Comment" }, comment.body),
      h("button", { type: "submit" }, "Save comment"),
    ], async (values) => {
      await api.patch(`/comments/${comment.id}`, { body: values.body });
      await load();
    });
    body.replaceWith(editor);
  };
  const remove = async (comment) => {
    if (!await confirmDialog("Delete this comment?", "Delete")) return;
    await api.delete(`/comments/${comment.id}`);
    await load();
  };
  const item = (entry) => {
    // No actor: the widget filed it, or a tracker (entry.via) changed it.
    const who = entry.actor ? entry.actor.name
      : entry.via === "reporter" ? "The reporter" : entry.via ? `The ${entry.via} sync` : "The widget";
    if (entry.kind === "commented") return commentItem(entry);
    const text = {
      created: `${who} filed the report`,
      changed: `${who} changed ${changeText(entry.changes || {})}`,
      comment_deleted: `${who} deleted a comment`,
      linked: `${who} linked the issue ${entry.changes?.issue?.to ?? ""}`,
      reopened: `${who} reopened it: still happening`,
      duplicate: entry.changes?.duplicates?.to
        ? `${who} marked ${entry.changes.duplicates.to} a duplicate of this report`
        : `${who} took ${entry.changes?.duplicates?.from ?? "a report"} off this report's duplicates`,
    }[entry.kind] || entry.kind;
    return h("li", {}, h("span", {}, text), " · ", h("time", {}, formatTime(entry.at)));
  };
  const box = canWrite ? form({ "aria-label": "Add a comment" }, [
    h("textarea", { name: "body", rows: 3, maxlength: 10000, required: true, "aria-label": "Comment",
      placeholder: "Write a comment; @Name mentions a member" }),
    h("label", { class: "switch" }, h("input", { type: "checkbox", name: "public" }), " Reply to reporter"),
    h("small", { class: "hint" }, "A reply is shown on the report's status page, and mailed to the reporter when the project keeps reporters up to date."),
    h("button", { type: "submit" }, "Comment"),
  ], async (values, element) => {
    await api.post(`/reports/${report.id}/comments`, { body: values.body, public: Boolean(values.public) });
    element.reset();
    await load();
  }) : null;
  const show = () => replaceContent(panel,
    h("h2", {}, "Activity"),
    h("ol", { class: "activity" }, entries.map(item)),
    box);
  await load();
  panel.reload = load; // for what else on the page adds to the activity (a linked issue)
  return panel;
}
