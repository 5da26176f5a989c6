package dev.fencing.jpa;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.HashSet;
import java.util.Set;
import org.hibernate.annotations.OnDelete;
import org.hibernate.annotations.OnDeleteAction;

/** Fenced; the database deletes its element collection's rows with it (its own rows). */
@Entity
@Table(name = "crate")
@Fenced("pups")
public class Crate {
  @Id String id = "";

  @ElementCollection
  @CollectionTable(name = "crate_label")
  @OnDelete(action = OnDeleteAction.CASCADE)
  Set<String> labels = new HashSet<>();

  protected Crate() {}

  Crate(String id) {
    this.id = id;
  }
}
