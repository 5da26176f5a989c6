package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.spring.boot.FencingRefusedDataAccessException;
import java.sql.SQLException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.support.SQLExceptionSubclassTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * Turns the fence's refusals into {@link FencingRefusedDataAccessException} wherever Spring
 * translates exceptions; everything else goes to the translator that was there before.
 */
final class FencingExceptionTranslation {
  private FencingExceptionTranslation() {}

  /** The refusal in {@code failure}'s causes as a {@link DataAccessException}, if there is one. */
  static @Nullable DataAccessException refusal(String task, Throwable failure) {
    if (failure instanceof FencingRefusedDataAccessException already) {
      return already;
    }
    Optional<FencingRefusedException> refusal = FencingExceptions.find(failure);
    return refusal
        .<DataAccessException>map(
            r -> new FencingRefusedDataAccessException(task + ": " + r.getMessage(), r))
        .orElse(null);
  }

  /** {@code e} translated: a refusal, or what Spring's standard translation makes of it. */
  static DataAccessException translate(String task, SQLException e) {
    DataAccessException refused = refusal(task, e);
    if (refused != null) {
      return refused;
    }
    DataAccessException translated = new SQLExceptionSubclassTranslator().translate(task, null, e);
    return translated == null ? new UncategorizedSQLException(task, null, e) : translated;
  }

  /** For {@code JdbcTemplate} and {@code JdbcTransactionManager}: refusals first. */
  static final class Jdbc implements SQLExceptionTranslator {
    private final SQLExceptionTranslator delegate;

    Jdbc(SQLExceptionTranslator delegate) {
      this.delegate = delegate;
    }

    @Override
    public @Nullable DataAccessException translate(
        String task, @Nullable String sql, SQLException ex) {
      DataAccessException refused = refusal(sql == null ? task : task + " [" + sql + "]", ex);
      return refused != null ? refused : delegate.translate(task, sql, ex);
    }
  }

  /**
   * For {@code @Repository} beans and Spring Data repositories: consulted before the {@code
   * EntityManagerFactory}'s own translation.
   */
  static final class Persistence implements PersistenceExceptionTranslator, Ordered {
    @Override
    public @Nullable DataAccessException translateExceptionIfPossible(RuntimeException ex) {
      return refusal("repository operation", ex);
    }

    @Override
    public int getOrder() {
      return Ordered.HIGHEST_PRECEDENCE;
    }
  }
}
