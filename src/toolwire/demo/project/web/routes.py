"""HTTP routes of the demo app."""

from auth.login import login


def post_login(request, users, sessions):
    user = users.find(request.form["user"])
    session_id = login(user, request.form["password"], sessions)
    return {"session": session_id}
