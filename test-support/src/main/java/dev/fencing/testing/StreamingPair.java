package dev.fencing.testing;

import java.util.Map;

/**
 * A primary and an asynchronous streaming standby ({@code initdb} + {@code pg_basebackup -R}), both
 * {@link PostgresServer}s on loopback, for failover tests: {@linkplain #cutOff() cut the standby
 * off} so that what the primary commits next never reaches it, {@linkplain #promote() promote} it,
 * and keep the old primary running (split brain) or {@linkplain PostgresServer#crash() crash} it.
 *
 * <pre>{@code
 * try (StreamingPair pair = StreamingPair.start()) {
 *   ... write on pair.primary() ...
 *   pair.awaitReplayed();           // the standby has it
 *   pair.cutOff();                  // from now on, the primary's commits are lost on failover
 *   ... write on pair.primary() ...
 *   PostgresServer promoted = pair.promote();
 * }
 * }</pre>
 *
 * <p>Every wait is bounded ({@link PostgresServer#WAIT}) and polls the servers' state: {@code
 * pg_is_in_recovery()}, LSNs, {@code pg_stat_replication}, {@code pg_stat_wal_receiver}.
 */
public final class StreamingPair implements AutoCloseable {
  private final PostgresServer primary;
  private final PostgresServer standby;

  private StreamingPair(PostgresServer primary, PostgresServer standby) {
    this.primary = primary;
    this.standby = standby;
  }

  /** Starts a primary and a standby streaming from it. */
  public static StreamingPair start() {
    PostgresServer primary = PostgresServer.create("primary", Map.of());
    try {
      PostgresServer standby = primary.standby("standby", Map.of());
      StreamingPair pair = new StreamingPair(primary, standby);
      pair.awaitStreaming();
      return pair;
    } catch (RuntimeException e) {
      primary.close();
      throw e;
    }
  }

  /** The primary (after {@link #promote()}: the old primary, still running unless stopped). */
  public PostgresServer primary() {
    return primary;
  }

  /** The standby (after {@link #promote()}: the new primary). */
  public PostgresServer standby() {
    return standby;
  }

  /** Waits until the primary has a streaming standby and the standby a WAL receiver. */
  public void awaitStreaming() {
    standby.awaitTrue("SELECT pg_is_in_recovery()", "recovery on the standby");
    primary.awaitTrue(
        "SELECT count(*) > 0 FROM pg_stat_replication WHERE state = 'streaming'",
        "streaming to the standby");
    standby.awaitTrue(
        "SELECT count(*) > 0 FROM pg_stat_wal_receiver WHERE status = 'streaming'",
        "the standby's WAL receiver");
  }

  /** Waits until the standby has replayed everything the primary has written so far. */
  public void awaitReplayed() {
    String lsn = primary.query("SELECT pg_current_wal_lsn()");
    standby.awaitTrue(
        "SELECT pg_last_wal_replay_lsn() >= '" + lsn + "'::pg_lsn",
        "replay on the standby up to " + lsn);
  }

  /**
   * Stops the standby's WAL receiver for good ({@code primary_conninfo = ''}, reloaded): whatever
   * the primary commits from now on is not on the standby, as with an asynchronous standby that
   * lags when the primary dies. Returns once neither side shows the connection.
   */
  public void cutOff() {
    standby.execute("ALTER SYSTEM SET primary_conninfo = ''");
    standby.execute("SELECT pg_reload_conf()");
    standby.awaitTrue("SELECT count(*) = 0 FROM pg_stat_wal_receiver", "the WAL receiver to stop");
    primary.awaitTrue(
        "SELECT count(*) = 0 FROM pg_stat_replication", "the primary to lose its standby");
  }

  /** Pauses replay on the standby (WAL is still received); {@link #resumeReplay()} undoes it. */
  public void pauseReplay() {
    standby.execute("SELECT pg_wal_replay_pause()");
    standby.awaitTrue("SELECT pg_get_wal_replay_pause_state() = 'paused'", "replay to pause");
  }

  /** Resumes replay paused by {@link #pauseReplay()}. */
  public void resumeReplay() {
    standby.execute("SELECT pg_wal_replay_resume()");
  }

  /**
   * Promotes the standby ({@code pg_promote(wait => true)}) and returns it, once it is out of
   * recovery. The old primary keeps running.
   */
  public PostgresServer promote() {
    String promoted =
        standby.query("SELECT pg_promote(true, " + PostgresServer.WAIT.toSeconds() + ")");
    if (!"t".equals(promoted)) {
      throw new IllegalStateException("the standby was not promoted");
    }
    standby.awaitTrue("SELECT NOT pg_is_in_recovery()", "the end of recovery");
    return standby;
  }

  /** Stops and deletes both servers. */
  @Override
  public void close() {
    try {
      standby.close();
    } finally {
      primary.close();
    }
  }
}
