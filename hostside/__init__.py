"""Host-side stack of hdemu: hip -> commands -> hsa runtime, the platform supervisor, the CLI,
trace export. Never imports ``deviceside``: the device roles are separate programs."""
