"""What every layer shares: Kafka's endpoint and security protocol facts, the errors that carry a
Kafka error code or name a setting, the zero UUID, and Kafka's MetadataVersion table. Imports
nothing of kafkalite's (docs/architecture.md, the layer rule)."""
