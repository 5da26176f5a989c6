package dev.fencing.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DataSource} whose connections carry the tokens bound with {@link Fencing#bind}: before
 * the first write of each transaction they ask PostgreSQL to check every bound token, in the same
 * transaction, on the same connection. Later writes of the transaction cost nothing more; plain
 * reads never pay. A refused write throws a {@link FencingRefusedException} after the transaction
 * was rolled back: nothing of it is written. The same refusal is the same exception on every path —
 * the check's, or a protected table's refusal of a write that carried no token for it; autocommit
 * or a transaction; a statement, a batch or a COPY — and is recorded the same way.
 *
 * <p>Wrap the pool or be wrapped by it: {@code FencedDataSource.wrap(hikari)} or a HikariCP pool
 * whose {@code dataSource} is a {@code FencedDataSource}; both work, because tokens are read from
 * the writing thread at each statement and the check's state ends with each transaction.
 *
 * <p>Which statements write is decided from their SQL text, conservatively: anything not
 * recognisably a plain read (SELECT without row locks or unknown functions, SHOW, EXPLAIN, ...) is
 * fenced — including {@code WITH ... AS (UPDATE ...)}, {@code SELECT my_function()}, batches and
 * {@code COPY ... FROM} through {@code unwrap(PGConnection.class).getCopyAPI()}. A write in
 * autocommit mode is made one transaction with its check. Other driver exceptions pass through
 * unchanged.
 *
 * <p><b>Several databases.</b> By default a fenced data source checks every token bound on the
 * thread, so a token whose resource lives in another database is refused there as never issued.
 * When one thread binds tokens of resources living in different databases (a job writing shard A
 * and shard B), tell each data source which resources live in its database with {@link
 * Builder#resources}: it then checks, carries and requires only those, and ignores the others —
 * another database's token never makes it refuse a write, and never passes for one of its own.
 */
public final class FencedDataSource implements DataSource {
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private final DataSource target;
  private final String schema;
  private final boolean requireToken;
  private final TokenChecker checker;

  private FencedDataSource(Builder builder) {
    this.target = builder.target;
    this.schema = builder.schema;
    this.requireToken = builder.requireToken;
    this.checker =
        new TokenChecker(
            builder.schema,
            builder.resources,
            builder.recordRejections,
            FencingMetrics.create(builder.meterRegistry));
  }

  /** The tables of fenced entities declared for this data source ({@link FencedTables}). */
  TableGuards tableGuards() {
    return checker.guards();
  }

  /** Fences {@code target} with the defaults. */
  public static FencedDataSource wrap(DataSource target) {
    return builder(target).build();
  }

  /** Starts a configuration fencing {@code target}. */
  public static Builder builder(DataSource target) {
    return new Builder(target);
  }

  @Override
  public Connection getConnection() throws SQLException {
    return FencedConnection.wrap(target.getConnection(), checker, requireToken);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return FencedConnection.wrap(target.getConnection(username, password), checker, requireToken);
  }

  /**
   * Declares {@code resource} as fenced by tokens issued elsewhere — a {@link FencedLock} of
   * ZooKeeper or etcd, or any other issuer of increasing numbers — so that the first write with a
   * token greater than {@code max_seen} advances it (see {@link FencedLock} for what that means for
   * the handover). Idempotent: call it at start-up, before the first fenced write; it runs in a
   * transaction of its own on a connection of the wrapped data source.
   *
   * <p>PostgreSQL cannot tell whether an external token was really issued, so it refuses only older
   * ones: a forged huge token fences the resource off for every later holder. Only clients that
   * hold the lock should be able to write through the fence (database privileges).
   *
   * @throws IllegalArgumentException if the name is malformed ({@link
   *     FencingToken#requireValidResource}); nothing is sent
   * @throws SQLException with SQLSTATE {@code ZF004} if the resource already exists with tokens
   *     issued by PostgreSQL ({@link LeaseClient}), or as a strict external resource ({@code
   *     create_resource(name, true, true)}); nothing is changed
   */
  public void createExternalResource(String resource) throws SQLException {
    FencingToken.requireValidResource(resource);
    try (Connection c = target.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      if (!autoCommit) {
        c.setAutoCommit(true);
      }
      try (PreparedStatement ps =
          c.prepareStatement("SELECT " + schema + ".create_resource(?, true, false)")) {
        ps.setString(1, resource);
        ps.execute();
      } finally {
        if (!autoCommit) {
          c.setAutoCommit(false);
        }
      }
    }
  }

  /**
   * Checks {@code token} in a transaction of its own and commits: for a token issued elsewhere, the
   * handover happens now instead of at its holder's first write. A newer token raises {@code
   * max_seen}, so every transaction of an older token that starts later is refused; like a first
   * write, this waits for the open transactions that already passed their check with the older
   * token (bound it with the database's {@code lock_timeout}). Call it right after acquiring a
   * {@link FencedLock} to fence the previous holder off at once.
   *
   * @throws FencingRefusedException if the token is refused (a newer one was already seen: this
   *     client no longer holds the lock), after recording the refusal
   * @throws IllegalArgumentException if the token's resource does not live in this data source's
   *     database ({@link Builder#resources}); nothing is sent
   */
  public void fence(FencingToken token) throws SQLException {
    Objects.requireNonNull(token, "token");
    if (!checker.places(token.resource())) {
      throw new IllegalArgumentException(
          "resource "
              + token.resource()
              + " does not live in this data source's database (FencedDataSource.Builder"
              + ".resources): fence it through the data source of its own database");
    }
    try (Connection c = target.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      if (autoCommit) {
        c.setAutoCommit(false);
      }
      try {
        // no statement's execution: nothing of the caller's to cancel or time out
        checker.check(c, List.of(new FencingContext.Binding(token, null)), null);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException again) {
          e.addSuppressed(again);
        }
        throw e;
      } finally {
        if (autoCommit) {
          c.setAutoCommit(true);
        }
      }
    }
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return target.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    target.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    target.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return target.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return target.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    return iface.isInstance(this) ? iface.cast(this) : target.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || iface.isInstance(target) || target.isWrapperFor(iface);
  }

  @Override
  public String toString() {
    return "FencedDataSource[" + target + "]";
  }

  /** Configuration of a {@link FencedDataSource}; validated as it is set. */
  public static final class Builder {
    private final DataSource target;
    private String schema = "fencing";
    private boolean requireToken;
    private boolean recordRejections = true;
    private @Nullable Object meterRegistry;
    private Predicate<String> resources = resource -> true;

    private Builder(DataSource target) {
      this.target = Objects.requireNonNull(target, "target");
    }

    /** The schema the fence's migrations were applied to (default {@code fencing}). */
    public Builder schema(String schema) {
      Objects.requireNonNull(schema, "schema");
      if (!IDENTIFIER.matcher(schema).matches()) {
        throw new IllegalArgumentException(
            "schema must be a lower-case SQL identifier ([a-z_][a-z0-9_]*), was '" + schema + "'");
      }
      this.schema = schema;
      return this;
    }

    /**
     * When true, a write with no token bound is refused with {@link MissingFencingTokenException}
     * (default false: writes with no token bound are not fenced).
     */
    public Builder requireToken(boolean requireToken) {
      this.requireToken = requireToken;
      return this;
    }

    /**
     * Whether a refusal is recorded in the fence's rejection log, in a transaction of its own right
     * after the rollback (default true): a refusal by the database with the receipt of its DETAIL,
     * a write refused because its lease is known lost once the database agrees it is lost. The
     * record's transaction is read-write on a connection set read-only (the setting is given back);
     * a hot standby cannot record, and the refusal waits for a commit through this data source on a
     * primary.
     */
    public Builder recordRejections(boolean recordRejections) {
      this.recordRejections = recordRejections;
      return this;
    }

    /**
     * The Micrometer {@code MeterRegistry} for the fence's counters and check latency (default:
     * Micrometer's global registry when Micrometer is on the classpath).
     */
    public Builder meterRegistry(Object meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /**
     * Which resources live in this data source's database (default: all of them). Tokens bound for
     * other resources are not checked, carried or required by this data source's connections: with
     * several databases, give each data source the resources of its own, e.g. {@code resources(name
     * -> name.startsWith("shard-a/"))} or {@code resources(Set.of("a", "b")::contains)}. The
     * predicate is called on the writing thread for each bound token, before the first write of
     * each transaction; it must be fast, side-effect free and must not throw.
     *
     * <p>A resource the predicate accepts is checked here: if it does not exist in this database,
     * the write is refused (never issued). A resource it rejects is never checked here, even if it
     * exists in this database: place each resource in exactly one database.
     */
    public Builder resources(Predicate<String> resources) {
      this.resources = Objects.requireNonNull(resources, "resources");
      return this;
    }

    /** Builds the fenced data source. */
    public FencedDataSource build() {
      return new FencedDataSource(this);
    }
  }
}
