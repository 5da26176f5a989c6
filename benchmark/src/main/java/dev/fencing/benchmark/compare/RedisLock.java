package dev.fencing.benchmark.compare;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

/**
 * Row 2: the single-instance Redis lock that Redlock runs on each master — {@code SET key value NX
 * PX ttl} with a random value, released by a compare-and-delete script. The holder then writes
 * through a plain DataSource: the random value tells PostgreSQL nothing about order.
 */
final class RedisLock implements Approach {
  static final Spec SPEC =
      new Spec(
          "Redlock (Redis multi-master)",
          false,
          "No",
          "Played on one Redis: SET NX PX with a random value, compare-and-delete release. The"
              + " value only guards the release; it has no order, so the resource cannot fence.");

  /** Deletes the key only if it still holds this client's value (the Redlock release). */
  private static final String RELEASE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1])"
          + " else return 0 end";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String host;
  private final int port;
  private final String prefix;
  private final DataSource dataSource;
  private final Duration ttl;
  private final Set<String> keys = ConcurrentHashMap.newKeySet();

  /**
   * @param prefix prepended to every key this approach touches; unique per run
   * @throws redis.clients.jedis.exceptions.JedisException if Redis does not answer
   */
  RedisLock(String host, int port, String prefix, DataSource dataSource, Duration ttl) {
    this.host = host;
    this.port = port;
    this.prefix = prefix;
    this.dataSource = dataSource;
    this.ttl = ttl;
    try (Jedis jedis = connect()) {
      jedis.ping();
    }
  }

  private Jedis connect() {
    return new Jedis(host, port);
  }

  @Override
  public Spec spec() {
    return SPEC;
  }

  @Override
  public Hold acquire(String resource, String client) throws Exception {
    String key = prefix + resource;
    keys.add(key);
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    String value = HexFormat.of().formatHex(bytes);
    Jedis jedis = connect();
    try {
      SetParams nxPx = SetParams.setParams().nx().px(ttl.toMillis());
      Poll.until(
          client + " acquiring Redis key " + key,
          Scenario.patience(ttl),
          () -> "OK".equals(jedis.set(key, value, nxPx)));
    } catch (Exception | Error e) {
      jedis.close();
      throw e;
    }
    return new Held(jedis, key, value);
  }

  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    Held held = (Held) hold;
    try (Jedis observer = connect()) {
      Poll.until(
          "expiry of Redis key " + held.key,
          Scenario.patience(ttl),
          () -> !held.value.equals(observer.get(held.key)));
    }
  }

  /** Deletes every key this run created (they have expired or been released already). */
  @Override
  public void close() {
    if (keys.isEmpty()) {
      return;
    }
    try (Jedis jedis = connect()) {
      jedis.del(keys.toArray(String[]::new));
    }
    keys.clear();
  }

  private final class Held implements Hold {
    private final Jedis jedis;
    private final String key;
    private final String value;

    Held(Jedis jedis, String key, String value) {
      this.jedis = jedis;
      this.key = key;
      this.value = value;
    }

    @Override
    public Optional<BigInteger> token() {
      return Optional.of(new BigInteger(value, 16));
    }

    @Override
    public Outcome write(Write write) throws Exception {
      return Writes.plain(dataSource, write);
    }

    @Override
    public void release() {
      try {
        jedis.eval(RELEASE, List.of(key), List.of(value));
      } finally {
        jedis.close();
      }
    }
  }
}
