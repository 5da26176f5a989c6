package dev.fencing.spring.boot.autoconfigure.app;

import dev.fencing.spring.boot.WithLease;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** JPA writes under {@code @WithLease}. */
@Service
public class JpaLedgerService {
  @PersistenceContext private EntityManager em;

  /** Persists under the lease (an IDENTITY insert: at once); returns the new entry's id. */
  @WithLease("ledger")
  @Transactional
  public long post(String text, long amount) {
    LedgerEntry entry = new LedgerEntry(text, amount);
    em.persist(entry);
    return entry.id();
  }

  /** Changes an entry: Hibernate writes the UPDATE at the commit, after the method returned. */
  @WithLease("ledger")
  @Transactional
  public void adjust(long id, long delta) {
    em.find(LedgerEntry.class, id).add(delta);
  }

  /**
   * The same without a transaction of its own: it joins the caller's, whose commit (and the UPDATE)
   * comes after this method and its lease advice returned.
   */
  @WithLease("ledger")
  public void adjustInCallersTransaction(long id, long delta) {
    em.find(LedgerEntry.class, id).add(delta);
  }
}
