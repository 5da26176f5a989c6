package dev.fencing.jdbc;

import java.lang.reflect.Field;
import java.sql.BatchUpdateException;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.BaseStatement;
import org.postgresql.core.CachedQuery;
import org.postgresql.core.ParameterList;
import org.postgresql.core.Query;
import org.postgresql.core.SqlCommand;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.GT;

/**
 * The check carried by a batch (issue 13): the check with literal arguments ({@link CheckLiteral})
 * becomes the batch's first entry, sent by pgjdbc's own batch execution with the caller's entries,
 * before one Sync: one round trip. The counts are the driver's without the check's; a {@code
 * BatchUpdateException} is the driver's with the check's count taken out and the failed entry's
 * number as the caller counts it. A refusal by the check stops the batch there: nothing of it runs.
 *
 * <p>A plain {@code Statement}'s batch is rebuilt with the check first (the wrapper keeps its SQL).
 * A {@code PreparedStatement}'s gets the check inserted first into the driver's own lists of the
 * batch's queries and parameters ({@code PgStatement.batchStatements}, {@code batchParameters}),
 * read by reflection; where they are not at hand, the check runs in its own round trip.
 *
 * <p>Not carried: an empty batch, a prepared batch of more than one statement, prepared for
 * generated keys (the check's row would become a key), with {@code RETURNING} (pgjdbc describes the
 * batch's first query first), or rewritten into multi-row inserts ({@code reWriteBatchedInserts},
 * whose counts pgjdbc works out from its first query). In autocommit a batch runs in the wrapper's
 * transaction ({@link #manyTransactionsInAutocommit}), the check carried with the batch and the
 * commit its own round trip: pgjdbc may Sync in the middle of a batch (a large one, or with {@code
 * simple}/{@code extendedForPrepared} a query message an entry), which in autocommit would commit
 * what came before and leave the rest outside the check's transaction.
 */
final class CarriedBatch implements Carrier {
  private static final String ENTRY_ABORTED =
      "Batch entry {0} {1} was aborted: {2}  Call getNextException to see other errors in the batch.";

  private final Statement raw;
  private final boolean large;
  // a plain statement's batch (its SQL, in order), or null for a prepared statement's
  private final @Nullable List<String> sql;

  private CarriedBatch(Statement raw, boolean large, @Nullable List<String> sql) {
    this.raw = raw;
    this.large = large;
    this.sql = sql;
  }

  /**
   * The carrier of {@code raw.<name>()}, a batch execution, or null if it cannot carry the check:
   * {@code sql} the plain statement's batch, {@code prepared} whether {@code raw} is a {@code
   * PreparedStatement} of one statement prepared without generated keys.
   */
  static @Nullable CarriedBatch of(
      Statement raw, String name, Object @Nullable [] args, List<String> sql, boolean prepared) {
    if (args != null && args.length > 0) {
      return null;
    }
    boolean large;
    if (name.equals("executeBatch")) {
      large = false;
    } else if (name.equals("executeLargeBatch")) {
      large = true;
    } else {
      return null;
    }
    if (raw instanceof PreparedStatement) {
      return prepared ? new CarriedBatch(raw, large, null) : null;
    }
    return sql.isEmpty() ? null : new CarriedBatch(raw, large, sql);
  }

  /** Always: pgjdbc may Sync in the middle of a batch, ending an implicit transaction there. */
  @Override
  public boolean manyTransactionsInAutocommit(PreferQueryMode mode, int tokens) {
    return true;
  }

  @Override
  public Carrier.@Nullable Carried call(CheckArguments check) throws SQLException {
    List<String> statements = sql;
    if (statements != null) {
      raw.clearBatch();
      raw.addBatch(check.literal());
      for (String s : statements) {
        raw.addBatch(s);
      }
    } else if (!prepend(check.literal())) {
      return null;
    }
    try {
      Object counts;
      if (large) {
        long[] all = raw.executeLargeBatch();
        counts = Arrays.copyOfRange(all, 1, all.length);
      } else {
        int[] all = raw.executeBatch();
        counts = Arrays.copyOfRange(all, 1, all.length);
      }
      return new Carrier.Carried(counts, null);
    } catch (BatchUpdateException e) {
      throw withoutCheck(e);
    }
  }

  /**
   * Inserts the check as the first entry of the driver's prepared batch; false (nothing changed)
   * where that cannot be done exactly.
   */
  @SuppressWarnings("unchecked")
  private boolean prepend(String checkSql) throws SQLException {
    if (!raw.isWrapperFor(BaseStatement.class)
        || !raw.getConnection().isWrapperFor(BaseConnection.class)) {
      return false;
    }
    Object pg = raw.unwrap(BaseStatement.class);
    List<Query> queries;
    List<ParameterList> parameters;
    try {
      Field q = field(pg.getClass(), "batchStatements");
      Field p = field(pg.getClass(), "batchParameters");
      if (q == null || p == null) {
        return false;
      }
      q.setAccessible(true);
      p.setAccessible(true);
      queries = (List<Query>) q.get(pg);
      parameters = (List<ParameterList>) p.get(pg);
    } catch (IllegalAccessException | RuntimeException e) {
      return false; // not pgjdbc's layout, or closed to reflection
    }
    if (queries == null
        || parameters == null
        || queries.isEmpty()
        || parameters.size() != queries.size()) {
      return false; // empty, or rewritten into multi-row inserts (one query for many rows)
    }
    Query first = queries.get(0);
    SqlCommand command = first.getSqlCommand();
    if (first.getSubqueries() != null
        || first.getBatchSize() != 1
        || !first.getClass().getSimpleName().equals("SimpleQuery")
        || command == null
        || command.isReturningKeywordPresent()) {
      return false;
    }
    BaseConnection connection = raw.getConnection().unwrap(BaseConnection.class);
    CachedQuery check = connection.getQueryExecutor().createQuery(checkSql, true, true);
    queries.add(0, check.query);
    // parameters, though none: a prepared batch stays in the extended protocol
    parameters.add(0, check.query.createParameterList());
    return true;
  }

  private static @Nullable Field field(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(name);
        return List.class.isAssignableFrom(f.getType()) ? f : null;
      } catch (NoSuchFieldException e) {
        // in a superclass
      }
    }
    return null;
  }

  /**
   * The driver's exception for the batch with the check first, as the driver reports the caller's
   * batch: the check's count taken out, the failed entry's number one less. A refusal by the check
   * (entry 0) is left as it is: the caller gets the refusal.
   */
  private static BatchUpdateException withoutCheck(BatchUpdateException e) {
    long[] counts = e.getLargeUpdateCounts();
    if (counts == null || counts.length == 0) {
      return e;
    }
    String message = e.getMessage();
    Throwable cause = e.getCause();
    if (message != null && cause != null) {
      for (int entry = 1; entry < counts.length; entry++) {
        String before = prefix(entry);
        if (before != null && message.startsWith(before)) {
          String renumbered = prefix(entry - 1);
          if (renumbered != null) {
            message = renumbered + message.substring(before.length());
          }
          break;
        }
      }
    }
    BatchUpdateException shifted =
        new BatchUpdateException(
            message,
            e.getSQLState(),
            e.getErrorCode(),
            Arrays.copyOfRange(counts, 1, counts.length),
            cause);
    SQLException next = e.getNextException();
    if (next != null) {
      shifted.setNextException(next);
    }
    shifted.setStackTrace(e.getStackTrace());
    return shifted;
  }

  /** pgjdbc's message for a failed entry {@code entry}, up to the entry's query. */
  private static @Nullable String prefix(int entry) {
    String message = GT.tr(ENTRY_ABORTED, entry, "\u0001", "\u0002");
    int query = message.indexOf('\u0001');
    return query < 0 || message.indexOf('\u0002') < query ? null : message.substring(0, query);
  }
}
