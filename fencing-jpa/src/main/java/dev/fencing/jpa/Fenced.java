package dev.fencing.jpa;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an entity whose writes must carry a fencing token: every insert, update, delete or upsert
 * of it, and every change of a collection it owns, is refused unless a token for its resource is
 * bound on the writing thread ({@link dev.fencing.jdbc.Fencing#bind}). PostgreSQL then compares the
 * token in the same transaction, through the {@link dev.fencing.jdbc.FencedDataSource} under
 * Hibernate.
 *
 * <p>The resource is either one name for every row, or one per row, taken from an attribute:
 *
 * <pre>{@code
 * @Entity @Fenced("ledger")                                  // every row: resource "ledger"
 * class LedgerEntry { ... }
 *
 * @Entity @Fenced(prefix = "account:", attribute = "number") // row with number 7: "account:7"
 * class Account { @Id Long id; long number; ... }
 * }</pre>
 *
 * <p>Give exactly one of {@link #value()} and {@link #attribute()}; {@link #prefix()} goes with
 * {@link #attribute()} only. {@link #value()} and a non-empty {@link #prefix()} must be valid
 * resource names ({@link dev.fencing.jdbc.FencingToken#requireValidResource(String)}). The
 * attribute must be a basic attribute of the entity (a column value or the identifier), never null
 * when the entity is written, and the mapping that writes its column (insertable, not a
 * {@code @Formula} nor a {@code @ColumnTransformer}, no generated value such as {@code @Generated},
 * no other attribute of the entity writing that column); its value is turned into text with {@code
 * String.valueOf}, so its type must be one whose text the column keeps: {@code String}, {@code
 * Character}, an integral type, {@code BigInteger}, {@code Boolean}, {@code UUID}, an enum or
 * {@code LocalDate} (a {@code BigDecimal} column's scale, a time zone, nanoseconds would read back
 * as another resource). With an {@code AttributeConverter} the resource is named by the value the
 * converter reads back from the column: each insert, update and upsert is refused unless its value,
 * converted to the column and back, names the same resource (a converter mapping two values to one
 * column value cannot let one resource's holder write another's rows); the converter's column type
 * must be one of those types, and the converter a function of its argument. An application's
 * {@code @JavaType} (its {@code unwrap} to the column and {@code wrap} back) and a {@code
 * UserType}'s value converter are checked alike; a {@code UserType} without a value converter and
 * an application's {@code JdbcType} bind the column with their own JDBC code and are refused. An
 * identifier the database generates (IDENTITY) is not known before the insert, so it cannot name
 * the resource. When an update changes the attribute, the tokens for the old and the new resource
 * are both required; a {@code StatelessSession}'s update, delete or upsert (no loaded state) also
 * requires the token for the resource of the row as the database holds it. Hibernate checks these
 * rules when it starts and fails naming the entity.
 *
 * <p>A foreign key of a fenced table whose {@code ON DELETE} action ({@code @OnDelete}, or an
 * {@code ON DELETE} / {@code ON UPDATE} action in its {@code foreignKeyDefinition}) the database
 * would run for another resource's (or an unfenced) row is refused at start: only a row's own
 * parts, or rows of the same fixed resource, may be cascaded by the database. Actions created
 * outside the mapping (migrations) are not seen: protect such a table.
 *
 * <p>Subclasses of a fenced entity are fenced too (Java inherits it from superclasses only: on an
 * interface or an embeddable it is refused at start). Fencing does not follow associations:
 * annotate every entity whose rows must be fenced (cascaded children included); a collection owned
 * by a fenced entity (element collections, join tables) is fenced with the owner's resource.
 *
 * @see FencingIntegrator
 * @see FencedEntityListener
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface Fenced {
  /** The resource every row of the entity belongs to, e.g. {@code "ledger"}. */
  String value() default "";

  /**
   * The attribute whose value names each row's resource (after {@link #prefix()}), e.g. {@code
   * "number"}.
   */
  String attribute() default "";

  /** Text before the {@link #attribute()}'s value in the resource name, e.g. {@code "account:"}. */
  String prefix() default "";
}
