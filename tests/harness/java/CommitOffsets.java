/*
 * Commits offsets of a group with Kafka's Java consumer, which never subscribes (a simple group: generation -1,
 * no member), one synchronous commit per argument (used by tests/harness/internal_corpus.py).
 *
 *   java -cp '<kafka libs>/*' CommitOffsets.java <bootstrap> <group> <commit>...
 *
 * <commit>: comma-separated <topic>:<partition>=<offset>[:<metadata>], e.g. orders:0=5:m-5,orders:1=7:m-7.
 * The metadata string is committed as given (librdkafka's Python binding would append a NUL byte).
 */

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class CommitOffsets {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            for (int i = 2; i < args.length; i++) {
                Map<TopicPartition, OffsetAndMetadata> commit = new LinkedHashMap<>();
                for (String item : args[i].split(",")) {
                    String[] tp = item.substring(0, item.indexOf('=')).split(":");
                    String[] om = item.substring(item.indexOf('=') + 1).split(":", 2);
                    commit.put(new TopicPartition(tp[0], Integer.parseInt(tp[1])),
                               new OffsetAndMetadata(Long.parseLong(om[0]), om.length > 1 ? om[1] : ""));
                }
                consumer.commitSync(commit);
                System.out.println(commit);
            }
        }
    }
}
