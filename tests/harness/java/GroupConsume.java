/*
 * Consumes topics in a group so the internal topics get that group's records (Kafka 4.x clients).
 *
 *   java -cp '<kafka libs>/*' GroupConsume.java <bootstrap> <classic|consumer|share> <group> <records> <topic>...
 *
 * classic / consumer: KafkaConsumer with group.protocol=<that> (consumer = KIP-848), from the earliest offset,
 * committing synchronously every 25 records and at the end.
 * share: KafkaShareConsumer (KIP-932); the group's share.auto.offset.reset is first set to earliest with the
 * Admin client, and each poll's records are acknowledged (ACCEPT) and committed synchronously.
 * Prints "<records read>" and exits 0 when it read <records> within 60 s; exits 1 otherwise.
 */

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class GroupConsume {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], protocol = args[1], group = args[2];
        int wanted = Integer.parseInt(args[3]);
        List<String> topics = Arrays.asList(args).subList(4, args.length);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        int read = 0;
        long deadline = System.currentTimeMillis() + 60_000;
        if (protocol.equals("share")) {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
                AlterConfigOp op = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                                                     AlterConfigOp.OpType.SET);
                admin.incrementalAlterConfigs(Map.of(res, List.of(op))).all().get();
            }
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(props)) {
                c.subscribe(topics);
                while (read < wanted && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(500));
                    for (ConsumerRecord<byte[], byte[]> r : records) read++;
                    if (!records.isEmpty()) c.commitSync();
                }
            }
        } else {
            props.put("group.protocol", protocol);
            props.put("auto.offset.reset", "earliest");
            props.put("enable.auto.commit", "false");
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
                c.subscribe(topics);
                while (read < wanted && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                        if (++read % 25 == 0) c.commitSync();
                    }
                }
                c.commitSync();
            }
        }
        System.out.println(read);
        System.exit(read >= wanted ? 0 : 1);
    }
}
