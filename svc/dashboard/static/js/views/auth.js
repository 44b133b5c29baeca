// Sign in and sign up, which start a session (the API sets the cookies) and go where the user
// was heading; and the two pages of a forgotten password.

import { api, ApiError } from "../api.js";
import { appendTo, field, form, h, replaceContent } from "../dom.js";
import { secondFactorStep } from "./second-factor.js";

function destination(context) {
  const next = context.query.get("next") || "";
  // Only a path of this site, as the browser itself reads it: "/\\evil.example" and
  // "/\t/evil.example" are other sites to a browser, though they start with one slash.
  let target = null;
  try {
    target = new URL(next, window.location.origin);
  } catch {
    return "/reports";
  }
  return next.startsWith("/") && target.origin === window.location.origin
    ? target.pathname + target.search + target.hash
    : "/reports";
}

function input(name, type, autocomplete, extra = {}) {
  return h("input", { name, type, autocomplete, required: true, ...extra });
}

export async function signInView(main, context) {
  const methods = await api.get("/auth/methods");
  if (!context.isCurrent()) return;
  const panel = h("section", { class: "panel narrow" }, h("h1", {}, "Sign in to svc"));
  const signIn = form({ "aria-label": "Sign in" }, [
    field("E-mail", input("email", "email", "username")),
    field("Password", input("password", "password", "current-password")),
    h("button", { type: "submit" }, "Sign in"),
  ], async (values) => {
    const answer = await api.post("/auth/login", values);
    if (answer.methods) {  // 202: a second factor is due before any session
      replaceContent(panel, secondFactorStep(answer, context, destination(context)));
      return;
    }
    context.signedIn(answer);
    context.navigate(destination(context), { replace: true });
  });
  const sso = methods.singleSignOn;
  appendTo(panel,
    sso ? h("p", {}, h("a", {
      class: "button sso", href: `${sso.url}?next=${encodeURIComponent(destination(context))}`,
    }, `Sign in with ${sso.name}`)) : null,
    methods.password ? [
      sso ? h("p", { class: "or" }, "or with your e-mail and password") : null,
      signIn,
      h("p", {}, h("a", { href: "/forgot-password" }, "Forgot password?")),
      methods.registration === "open" ? h("p", {}, "No account yet? ", h("a", { href: "/signup" }, "Sign up")) : null,
    ] : null);
  appendTo(main, panel);
}

export function signUpView(main, context) {
  const panel = h("section", { class: "panel narrow" }, h("h1", {}, "Create your svc account"));
  const signUp = form({ "aria-label": "Sign up" }, [
    field("Name", input("name", "text", "name", { maxlength: 100 })),
    field("E-mail", input("email", "email", "username")),
    field("Password", input("password", "password", "new-password", { minlength: 8, maxlength: 128 }),
      "At least 8 characters."),
    h("button", { type: "submit" }, "Create account"),
  ], async (values) => {
    const answer = await api.post("/auth/register", values);
    if (answer.methods) {  // 202: SVC_REQUIRE_2FA, an authenticator app first
      replaceContent(panel, secondFactorStep(answer, context, "/projects"));
      return;
    }
    context.signedIn(answer);
    context.navigate("/projects", { replace: true });
  });
  appendTo(panel, signUp,
    h("p", {}, "Already have an account? ", h("a", { href: "/login" }, "Sign in")));
  appendTo(main, panel);
}

export function forgotPasswordView(main) {
  const sent = h("p", { class: "notice", role: "status", hidden: true });
  const ask = form({ "aria-label": "Forgot password" }, [
    field("E-mail", input("email", "email", "username")),
    h("button", { type: "submit" }, "Send reset link"),
  ], async (values) => {
    await api.post("/auth/forgot-password", values);
    sent.textContent = `If ${values.email} has an account here, a link to choose a new password is on its way. It works once, within the hour.`;
    sent.hidden = false;
  });
  appendTo(main, h("section", { class: "panel narrow" },
    h("h1", {}, "Forgot your password?"),
    ask,
    sent,
    h("p", {}, h("a", { href: "/login" }, "Back to sign in"))));
}

export function resetPasswordView(main, context) {
  const token = context.params[0];
  const done = h("p", { class: "notice", role: "status", hidden: true },
    "Your password is changed, and every session and token of your account has ended. ",
    h("a", { href: "/login" }, "Sign in"), " with the new password.");
  const reset = form({ "aria-label": "Choose a new password" }, [
    field("New password", input("password", "password", "new-password", { minlength: 8, maxlength: 128 }),
      "At least 8 characters."),
    h("button", { type: "submit" }, "Set password"),
  ], async (values, element) => {
    await api.post("/auth/reset-password", { token, password: values.password });
    element.hidden = true;
    done.hidden = false;
  });
  appendTo(main, h("section", { class: "panel narrow" },
    h("h1", {}, "Choose a new password"),
    reset,
    done));
}

// An invitation's link: signed in as the invited address, one click joins; without an account,
// choosing a name and password creates it (also when sign-up is closed); with an account, sign
// in first and come back here.
export async function invitationView(main, context) {
  const token = context.params[0];
  const invitation = await api.post("/invitations/preview", { token });
  if (!context.isCurrent()) return;
  const inviter = invitation.invitedBy ? invitation.invitedBy.name : "An owner";
  const panel = h("section", { class: "panel narrow" },
    h("h1", {}, `Join ${invitation.projectName}`),
    h("p", {}, `${inviter} invites ${invitation.email} to ${invitation.projectName} as ${invitation.role}.`));
  const joined = (project) => context.navigate(`/projects/${project.id}`, { replace: true });
  const here = `/invite/${encodeURIComponent(token)}`;
  if (context.user && context.user.email === invitation.email) {
    panel.append(form({ "aria-label": "Accept the invitation" }, [
      h("button", { type: "submit" }, `Join ${invitation.projectName}`),
    ], async () => joined((await api.post("/invitations/accept", { token })).project)));
  } else if (context.user) {
    panel.append(h("p", { role: "alert" },
      `You are signed in as ${context.user.email}, but this invitation is for ${invitation.email}. `,
      "Sign out, then open the link again."));
  } else if (invitation.accountExists) {
    panel.append(h("p", {}, `${invitation.email} has an account here: `,
      h("a", { href: `/login?next=${encodeURIComponent(here)}` }, "sign in to accept"), "."));
  } else {
    panel.append(form({ "aria-label": "Create your account" }, [
      field("E-mail", h("input", { name: "email", type: "email", value: invitation.email, readonly: true })),
      field("Name", input("name", "text", "name", { maxlength: 100 })),
      field("Password", input("password", "password", "new-password", { minlength: 8, maxlength: 128 }),
        "At least 8 characters."),
      h("button", { type: "submit" }, "Create account and join"),
    ], async (values) => {
      const accepted = await api.post("/invitations/accept",
        { token, name: values.name, password: values.password });
      if (accepted.methods) {  // 202: joined; an authenticator app before the session starts
        replaceContent(panel, secondFactorStep(accepted, context, "/projects"));
        return;
      }
      context.signedIn(accepted.user);
      joined(accepted.project);
    }));
  }
  appendTo(main, panel);
}

// The link at the foot of every notification mail. Opening it changes nothing (mail scanners
// open links); the button does, as a mail program's one-click POST to the same address does.
export function unsubscribeView(main, context) {
  const token = context.params[0];
  const done = h("p", { class: "notice", role: "status", hidden: true });
  const confirm = form({ "aria-label": "Unsubscribe" }, [
    h("button", { type: "submit" }, "Stop these mails"),
  ], async (values, element) => {
    const response = await fetch(`/unsubscribe/${encodeURIComponent(token)}`, { method: "POST" });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, body);
    done.textContent = body.projectName
      ? `Done: ${body.email} gets no more mails about ${body.projectName}.`
      : `Done: ${body.email} gets no more notification mails.`;
    element.hidden = true;
    done.hidden = false;
  });
  appendTo(main, h("section", { class: "panel narrow" },
    h("h1", {}, "Unsubscribe"),
    h("p", {}, "Stop the mails this link came with? (A member of a team can turn them on again on their account page.)"),
    confirm,
    done,
    context.user ? h("p", {}, h("a", { href: "/account" }, "Your notification settings")) : null));
}
