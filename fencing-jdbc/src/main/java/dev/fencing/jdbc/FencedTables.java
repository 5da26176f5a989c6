package dev.fencing.jdbc;

import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Tables whose writes need a token for a known resource, whatever statement writes them — a bulk
 * {@code UPDATE} or {@code DELETE}, a native query — declared for one {@link FencedDataSource} by
 * integrations when they start (fencing-jpa declares the tables of every {@code @Fenced} entity on
 * the data source its {@code SessionFactory} uses). A connection of that data source refuses a
 * statement whose SQL writes such a table (its {@code UPDATE}, {@code DELETE FROM}, {@code INSERT
 * INTO}, {@code MERGE INTO}, {@code TRUNCATE} or {@code COPY} target) with a {@link
 * MissingFencingTokenException} unless the writing thread has a token for the table's resource
 * bound; the transaction is rolled back and nothing of it is written.
 *
 * <p>A table whose rows name their resources one by one ({@link #requireRowResources}) cannot be
 * judged by the client for a statement that writes many rows: such a write is accepted only if the
 * table is protected ({@code fencing.protect_rows}, whose trigger judges every row), else refused.
 * An entity write announced with {@link #announceRowWrite} right before its statement is not such a
 * write. Declarations hold for the data source's lifetime; a table declared with several resources
 * (entities sharing it) needs a token for each. Tables are matched by name, without schema: a
 * per-row table counts as protected only if every table of its name the session can see (in any
 * schema, its temporary ones included) is.
 */
public final class FencedTables {
  private final TableGuards guards;

  private FencedTables(TableGuards guards) {
    this.guards = guards;
  }

  /**
   * The declarations of {@code dataSource}: a {@link FencedDataSource}, or a wrapper of one that
   * unwraps to it (a pool's or a framework's proxy); empty if it is neither — such a data source
   * fences nothing, so there is nothing to declare.
   *
   * @throws SQLException if asking the wrapper failed
   */
  public static Optional<FencedTables> of(DataSource dataSource) throws SQLException {
    Objects.requireNonNull(dataSource, "dataSource");
    if (dataSource instanceof FencedDataSource fenced) {
      return Optional.of(new FencedTables(fenced.tableGuards()));
    }
    if (dataSource.isWrapperFor(FencedDataSource.class)) {
      return Optional.of(new FencedTables(dataSource.unwrap(FencedDataSource.class).tableGuards()));
    }
    return Optional.empty();
  }

  /**
   * Every write to {@code table} needs a token for {@code resource} bound.
   *
   * @param table the table's name as the SQL names it, without schema (an unquoted name is folded
   *     as the server folds it, a quoted one kept as it is)
   * @throws IllegalArgumentException if {@code resource} is not a valid resource name
   */
  public void requireToken(String table, String resource) {
    FencingToken.requireValidResource(Objects.requireNonNull(resource, "resource"));
    guards.declare(table, resource);
  }

  /**
   * {@code table}'s rows name their resources one by one: a statement writing it that no {@link
   * #announceRowWrite} announced (a bulk or native query) is refused unless the table is protected.
   */
  public void requireRowResources(String table) {
    guards.declare(table, null);
  }

  /**
   * Announces, on the writing thread, that the next statement writing {@code table} writes one row
   * whose resource's token the caller has already required (fencing-jpa's entity events).
   */
  public static void announceRowWrite(String table) {
    TableGuards.announce(table);
  }

  /**
   * Announces, on the writing thread, that every statement writing {@code table} until {@link
   * #withdrawRowWrite} writes rows of one resource whose token the caller has already required
   * (fencing-jpa's collection events: a collection's statements, one per changed row).
   */
  public static void announceRowWrites(String table) {
    TableGuards.announceUntilWithdrawn(table);
  }

  /**
   * Withdraws, on the writing thread, what {@link #announceRowWrite} announced for {@code table}
   * and no statement used up: the entity's write is over (fencing-jpa's {@code EventMonitor}, at
   * Hibernate's {@code completeEntity…Event}), and Hibernate may have skipped one of its tables (an
   * update that changed none of that table's columns), so the announcement must not let a later
   * bulk or native write of it through.
   */
  public static void withdrawRowWrite(String table) {
    TableGuards.withdraw(table);
  }

  /**
   * What a declared table and a written one are matched by, for a table's name as the server stores
   * it (unquoted names already folded): its non-ASCII letters in lower case, cut to the 63 bytes
   * the server keeps. For integrations that must find the declared tables' rows in the catalog
   * (fencing-jpa's check of database cascades) by the same rule the guard uses.
   */
  public static String matchKey(String storedName) {
    return TableGuards.matchKey(storedName);
  }
}
