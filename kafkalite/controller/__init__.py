"""The controller: its view of the cluster, the channel to the brokers, request batches."""
