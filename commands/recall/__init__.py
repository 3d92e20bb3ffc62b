"""What comes back: hybrid search, scoped query, resume, agent context and relations."""
