// Sign in and sign up, which start a session (the API sets the cookies) and go where the user
// was heading; and the two pages of a forgotten password.

import { api } from "../api.js";
import { field, form, h } from "../dom.js";

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

export function signInView(main, context) {
  const signIn = form({ "aria-label": "Sign in" }, [
    field("E-mail", input("email", "email", "username")),
    field("Password", input("password", "password", "current-password")),
    h("button", { type: "submit" }, "Sign in"),
  ], async (values) => {
    context.signedIn(await api.post("/auth/login", values));
    context.navigate(destination(context), { replace: true });
  });
  main.append(h("section", { class: "panel narrow" },
    h("h1", {}, "Sign in to svc"),
    signIn,
    h("p", {}, h("a", { href: "/forgot-password" }, "Forgot password?")),
    h("p", {}, "No account yet? ", h("a", { href: "/signup" }, "Sign up"))));
}

export function signUpView(main, context) {
  const signUp = form({ "aria-label": "Sign up" }, [
    field("Name", input("name", "text", "name", { maxlength: 100 })),
    field("E-mail", input("email", "email", "username")),
    field("Password", input("password", "password", "new-password", { minlength: 8, maxlength: 128 }),
      "At least 8 characters."),
    h("button", { type: "submit" }, "Create account"),
  ], async (values) => {
    context.signedIn(await api.post("/auth/register", values));
    context.navigate("/projects", { replace: true });
  });
  main.append(h("section", { class: "panel narrow" },
    h("h1", {}, "Create your svc account"),
    signUp,
    h("p", {}, "Already have an account? ", h("a", { href: "/login" }, "Sign in"))));
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
  main.append(h("section", { class: "panel narrow" },
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
  main.append(h("section", { class: "panel narrow" },
    h("h1", {}, "Choose a new password"),
    reset,
    done));
}
