"""Login handling for the demo web app."""

LOGIN_TIMEOUT_SECONDS = 30


def login(user, password, sessions):
    """Check the password and open a session; the login fails after LOGIN_TIMEOUT_SECONDS."""
    if not user.check_password(password):
        raise PermissionError("bad login")
    return sessions.open(user, ttl=LOGIN_TIMEOUT_SECONDS)
