package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Table;
import org.hibernate.annotations.OnDelete;
import org.hibernate.annotations.OnDeleteAction;

/** A {@link Hutch} whose own table's row the database deletes with the hutch's: the same row. */
@Entity
@Table(name = "cage")
@OnDelete(action = OnDeleteAction.CASCADE)
public class Cage extends Hutch {
  long bars;

  protected Cage() {}

  Cage(String id) {
    super(id);
  }
}
