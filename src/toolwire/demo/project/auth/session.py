"""Sessions: a store with a time-to-live."""

import time


class SessionStore:
    def __init__(self):
        self._sessions = {}

    def open(self, user, ttl):
        session_id = f"s-{user.id}-{int(time.time())}"
        self._sessions[session_id] = (user, time.time() + ttl)
        return session_id

    def get(self, session_id):
        user, expires = self._sessions.get(session_id, (None, 0))
        if time.time() > expires:  # an expired session looks like a login timeout
            return None
        return user
