/**
 * Hibernate and JPA entity writes fenced automatically.
 *
 * <p>Annotate the entities whose writes must carry a token with {@link dev.fencing.jpa.Fenced},
 * give Hibernate its connections from a {@link dev.fencing.jdbc.FencedDataSource} (directly, under
 * or over a pool), and bind the lease around each transaction:
 *
 * <pre>{@code
 * properties.put("hibernate.connection.datasource", FencedDataSource.wrap(pool));
 *
 * try (Lease lease = leases.acquire("ledger", ttl, timeout);
 *      FencingScope scope = Fencing.bind(lease)) {
 *   em.getTransaction().begin();
 *   em.persist(new LedgerEntry(...));
 *   em.getTransaction().commit();      // the flush runs here: keep the scope open until after it
 * }
 * }</pre>
 *
 * <p>The work is split in two. The {@link dev.fencing.jdbc.FencedDataSource} does the compare: it
 * has PostgreSQL check every bound token before the first write of each transaction, once per
 * transaction, for entity writes, batches, bulk and native queries alike, and turns a stale token
 * into a {@link dev.fencing.jdbc.StaleFencingTokenException} after rolling the transaction back.
 * This package, plugged in by {@link dev.fencing.jpa.FencingIntegrator} as soon as the jar is on
 * the classpath, makes sure a fenced entity is never written without its token: a write with no
 * token bound for the entity's resource is refused before its SQL is sent ({@link
 * dev.fencing.jpa.FencingPersistenceException}), and a write through a connection that is not
 * fenced fails with an {@link java.lang.IllegalStateException} that says how to wire it.
 *
 * <p>Whatever refused a write, {@code FencingExceptions.find(e)} finds the refusal in the exception
 * Hibernate or JPA throws.
 *
 * <p>Limits:
 *
 * <ul>
 *   <li>Bulk and native mutation queries ({@code createQuery("update ...").executeUpdate()}, {@code
 *       createNativeQuery(...).executeUpdate()}) fire no entity events. With a token bound they are
 *       fenced by the {@code FencedDataSource} like any write; with no token bound at all they are
 *       not refused (until protected tables are enforced in the database).
 *   <li>Tokens are read from the thread that flushes; work handed to other threads needs {@link
 *       dev.fencing.jdbc.Fencing#wrap(Runnable)}.
 *   <li>Side effects outside PostgreSQL are not fenced.
 * </ul>
 */
@NullMarked
package dev.fencing.jpa;

import org.jspecify.annotations.NullMarked;
