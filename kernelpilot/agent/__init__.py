"""The agent loop: skills, tools, the LLM client (litellm or replay) and the `SessionController` that runs a session."""
