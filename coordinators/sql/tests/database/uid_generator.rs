//! Baidu mode: worker IDs from uid-generator's own table, read back as its Java does.

use super::*;

/// uid-generator's parseUID, as its Java does it (sign 1, time 28, worker 22, sequence 13).
fn uid_generator_parse(uid: i64, epoch_seconds: i64) -> (i64, i64, i64) {
    let (total, sign, time_bits, worker_bits, seq_bits) = (64u32, 1u32, 28u32, 22u32, 13u32);
    let sequence = ((uid << (total - seq_bits)) as u64 >> (total - seq_bits)) as i64;
    let worker = ((uid << (time_bits + sign)) as u64 >> (total - worker_bits)) as i64;
    let delta_seconds = (uid as u64 >> (worker_bits + seq_bits)) as i64;
    ((epoch_seconds + delta_seconds) * 1000, worker, sequence)
}

#[test]
fn baidu_mode_takes_consecutive_worker_ids_from_baidus_own_table() {
    each_kind(|kind| {
        let server = shared(kind);
        // uid-generator's WORKER_NODE.sql (MySQL), and the same table in PostgreSQL's types.
        server.sql(match kind {
            Kind::MariaDb => {
                "DROP TABLE IF EXISTS WORKER_NODE;
                 CREATE TABLE WORKER_NODE
                 (
                 ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id',
                 HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name',
                 PORT VARCHAR(64) NOT NULL COMMENT 'port',
                 TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER',
                 LAUNCH_DATE DATE NOT NULL COMMENT 'launch date',
                 MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time',
                 CREATED TIMESTAMP NOT NULL COMMENT 'created time',
                 PRIMARY KEY(ID)
                 )
                  COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB;"
            }
            Kind::Postgres => {
                "DROP TABLE IF EXISTS WORKER_NODE;
                 CREATE TABLE WORKER_NODE (ID BIGSERIAL NOT NULL, HOST_NAME VARCHAR(64) NOT NULL,
                   PORT VARCHAR(64) NOT NULL, TYPE INT NOT NULL, LAUNCH_DATE DATE NOT NULL,
                   MODIFIED TIMESTAMP NOT NULL, CREATED TIMESTAMP NOT NULL, PRIMARY KEY(ID));
                 GRANT ALL ON WORKER_NODE TO flakery;
                 GRANT ALL ON SEQUENCE worker_node_id_seq TO flakery;"
            }
        });
        // uid-generator's layout with its epoch moved (its 28 bits of 2016 ran out in 2024).
        let layout = Layout::parse("baidu;epoch=2025-01-01T00:00:00+08:00").unwrap();
        let epoch_seconds = layout.epoch_ms() / 1000;
        let url = server.database_url();
        let starts: Vec<BaiduWorkerNode> = (0..3)
            .map(|_| {
                BaiduWorkerNode::acquire(url.clone(), &layout, Duration::from_secs(5)).unwrap()
            })
            .collect();
        let rows: Vec<i64> = starts.iter().map(BaiduWorkerNode::row_id).collect();
        assert_eq!(rows, vec![1, 2, 3], "{kind:?}: one new row per start");
        for start in starts {
            let row = start.row_id();
            let generator = Generator::builder()
                .layout(layout.clone())
                .lease(Box::new(start))
                .build()
                .unwrap();
            let before = SystemClock.now_ms() / 1000 * 1000;
            let id = generator.next_id().unwrap();
            let (ms, worker, sequence) = uid_generator_parse(id, epoch_seconds);
            let ours = decode(id, &layout).unwrap();
            assert_eq!(worker, row, "{kind:?}: the row's ID is the worker ID");
            assert_eq!(
                (ours.worker_id as i64, ours.sequence as i64),
                (worker, sequence)
            );
            assert_eq!(ours.timestamp_ms, ms);
            assert!((before..before + 2000).contains(&ms), "{ms} vs {before}");
        }
        // Past the layout's 2^22 worker IDs, as uid-generator refuses.
        server.sql(match kind {
            Kind::MariaDb => "ALTER TABLE WORKER_NODE AUTO_INCREMENT = 4194304",
            Kind::Postgres => "SELECT setval('worker_node_id_seq', 4194303)",
        });
        let err =
            BaiduWorkerNode::acquire(url.clone(), &layout, Duration::from_secs(5)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::WorkerIdsExhausted,
            "{}",
            err.message()
        );
        assert!(err.message().contains("4194304"), "{}", err.message());
        assert!(!err.message().contains(&server.password));
    });
}
