/*
 * Writes a deleted tiered partition's RemotePartitionDeleteMetadata events (DELETE_PARTITION_MARKED, _STARTED,
 * _FINISHED) into __remote_log_metadata through Kafka's own TopicBasedRemoteLogMetadataManager, the way a
 * ZooKeeper-mode controller and broker did. A KRaft broker deletes a tiered topic's remote segments without them
 * (RemoteLogManager.stopPartitions publishes only segment updates), so this is the one way to have them written
 * by Kafka's code (used by tests/harness/tiered_corpus.py).
 *
 *   java -cp '<kafka libs>/*' RemotePartitionDelete.java <bootstrap> <topic id> <topic> <partition> <broker id>
 *       <metadata topic partitions> <scratch dir>
 */

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

public class RemotePartitionDelete {
    public static void main(String[] args) throws Exception {
        int brokerId = Integer.parseInt(args[4]);
        Map<String, Object> configs = new HashMap<>();
        configs.put("remote.log.metadata.common.client.bootstrap.servers", args[0]);
        configs.put("broker.id", brokerId);
        configs.put("log.dir", args[6]);
        configs.put("remote.log.metadata.topic.num.partitions", args[5]);
        configs.put("remote.log.metadata.topic.replication.factor", "1");
        configs.put("remote.log.metadata.topic.min.isr", "1");
        TopicIdPartition partition = new TopicIdPartition(Uuid.fromString(args[1]),
                new TopicPartition(args[2], Integer.parseInt(args[3])));
        try (TopicBasedRemoteLogMetadataManager manager = new TopicBasedRemoteLogMetadataManager()) {
            manager.configure(configs);
            try {  // 4.x starts initializing only once told the broker is ready; 3.9 starts in configure()
                TopicBasedRemoteLogMetadataManager.class.getMethod("onBrokerReady").invoke(manager);
            } catch (NoSuchMethodException e) {
                // 3.9
            }
            manager.onPartitionLeadershipChanges(Set.of(partition), Set.of());
            for (RemotePartitionDeleteState state : RemotePartitionDeleteState.values()) {
                RemotePartitionDeleteMetadata event =
                        new RemotePartitionDeleteMetadata(partition, state, System.currentTimeMillis(), brokerId);
                long deadline = System.currentTimeMillis() + 60_000;
                CompletableFuture<Void> stored = null;
                while (stored == null) {
                    try {  // the manager initializes in the background (4.x has no isInitialized()): wait for it
                        stored = manager.putRemotePartitionDeleteMetadata(event);
                    } catch (Exception e) {
                        if (System.currentTimeMillis() > deadline) {
                            throw e;
                        }
                        Thread.sleep(500);
                    }
                }
                stored.get(60, TimeUnit.SECONDS);
                System.out.println(event);
            }
        }
    }
}
