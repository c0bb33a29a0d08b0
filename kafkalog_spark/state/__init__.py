"""The state Kafka keeps in its internal topics, replayed offline from a partition dir's records: consumer
offsets and groups (`__consumer_offsets`), transactions (`__transaction_state`), the cluster's metadata image
(`__cluster_metadata`). Below the Spark source: plain Python over the decoder core."""
