package dev.fencing.spring.boot.autoconfigure;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceException;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.datasource.ConnectionHandle;
import org.springframework.orm.jpa.JpaDialect;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;

/**
 * The {@code JpaTransactionManager}'s dialect with refusals translated first, so a refusal at
 * commit (a JPA flush) reaches the caller as {@code FencingRefusedDataAccessException}.
 */
final class FencingJpaDialect implements JpaDialect {
  private final JpaDialect delegate;

  FencingJpaDialect(JpaDialect delegate) {
    this.delegate = delegate;
  }

  JpaDialect delegate() {
    return delegate;
  }

  @Override
  public @Nullable DataAccessException translateExceptionIfPossible(RuntimeException ex) {
    DataAccessException refused = FencingExceptionTranslation.refusal("JPA operation", ex);
    return refused != null ? refused : delegate.translateExceptionIfPossible(ex);
  }

  @Override
  public @Nullable Object beginTransaction(EntityManager em, TransactionDefinition definition)
      throws PersistenceException, SQLException, TransactionException {
    return delegate.beginTransaction(em, definition);
  }

  @Override
  public @Nullable Object prepareTransaction(
      EntityManager em, boolean readOnly, @Nullable String name) throws PersistenceException {
    return delegate.prepareTransaction(em, readOnly, name);
  }

  @Override
  public void cleanupTransaction(@Nullable Object transactionData) {
    delegate.cleanupTransaction(transactionData);
  }

  @Override
  public @Nullable ConnectionHandle getJdbcConnection(EntityManager em, boolean readOnly)
      throws PersistenceException, SQLException {
    return delegate.getJdbcConnection(em, readOnly);
  }

  @Override
  public void releaseJdbcConnection(ConnectionHandle conHandle, EntityManager em)
      throws PersistenceException, SQLException {
    delegate.releaseJdbcConnection(conHandle, em);
  }
}
