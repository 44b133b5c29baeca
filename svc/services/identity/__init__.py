"""Accounts and how people prove who they are: users, second factors, passkeys, password resets,
single sign-on, invitations."""
