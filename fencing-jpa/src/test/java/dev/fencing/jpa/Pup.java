package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.hibernate.annotations.OnDelete;
import org.hibernate.annotations.OnDeleteAction;
import org.jspecify.annotations.Nullable;

/** Fenced, its foreign key to an unfenced {@link Kennel} declared {@code ON DELETE CASCADE}. */
@Entity
@Table(name = "pup")
@Fenced("pups")
public class Pup {
  @Id String id = "";

  @ManyToOne
  @OnDelete(action = OnDeleteAction.CASCADE)
  @Nullable Kennel kennel;

  protected Pup() {}

  Pup(String id, Kennel kennel) {
    this.id = id;
    this.kennel = kennel;
  }
}
