"""Who reaches the memory: HTTP, MCP, mem0's API, API keys and the read-model follower."""
