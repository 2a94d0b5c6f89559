//! The four push-notification config operations, and configs given with a message.

use a2a_types::{
    A2aError, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig, TaskPushNotificationConfigRequest,
};

use super::{RequestHandler, no_ids, store_failure};
use crate::push::PushDelivery;
use a2a_runtime::CallContext;
use a2a_runtime::StartRequest;
use a2a_runtime::store::PUSH_DELIVERY_DONE;

impl RequestHandler {
    /// The delivery service, when this agent sends push notifications; else the error the
    /// spec requires.
    fn push_delivery(&self, call: &CallContext) -> Result<&PushDelivery, A2aError> {
        let push = self
            .delivery()
            .ok_or(A2aError::PushNotificationNotSupported)?;
        self.admit(call)?;
        Ok(push)
    }

    /// The delivery service when this agent sends push notifications (it has one and its
    /// card says so).
    fn delivery(&self) -> Option<&PushDelivery> {
        self.config
            .push
            .as_ref()
            .filter(|_| self.card.capabilities.push_notifications == Some(true))
    }

    /// Whether this agent sends push notifications.
    pub fn sends_push_notifications(&self) -> bool {
        self.delivery().is_some()
    }

    /// `CreateTaskPushNotificationConfig`: stores the config (with a new `id` unless it has
    /// one) and, while the task runs, delivers its next events to the webhook.
    pub async fn create_push_config(
        &self,
        config: TaskPushNotificationConfig,
        call: &CallContext,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let task_id = config.task_id.clone().unwrap_or_default();
        let operation = async {
            let push = self.push_delivery(call)?;
            let mut config = config;
            if task_id.is_empty() {
                return Err(A2aError::invalid_field("taskId", "is required"));
            }
            if config.url.is_empty() {
                return Err(A2aError::invalid_field("url", "is required"));
            }
            push.check(&config)?;
            if config.id.as_deref().is_none_or(str::is_empty) {
                config.id = Some(a2a_types::new_id());
            }
            let snap = self.visible_snapshot(&task_id, Some(0), call).await?;
            self.runtime
                .store()
                .put_push_config(&task_id, &config)
                .await
                .map_err(|e| match e {
                    a2a_runtime::store::StoreError::NotFound(_) => {
                        A2aError::task_not_found(&task_id)
                    }
                    e => store_failure(e),
                })?;
            if snap.task.status.state.is_terminal() {
                // Nothing will be delivered: say so, or another process would take the
                // config for one with events left to deliver.
                self.runtime
                    .store()
                    .push_delivered(
                        &task_id,
                        config.id.as_deref().unwrap_or_default(),
                        PUSH_DELIVERY_DONE,
                    )
                    .await
                    .map_err(store_failure)?;
            } else {
                let events = self.runtime.follow_from(&task_id, snap.seq);
                let from = (self.runtime.store().clone(), snap.seq);
                push.follow(&task_id, config.clone(), events, from, None);
            }
            Ok(config)
        };
        self.observed(
            "CreateTaskPushNotificationConfig",
            call,
            Some(&task_id),
            no_ids,
            operation,
        )
        .await
    }

    /// `GetTaskPushNotificationConfig`; an unknown task or config is `TaskNotFound`.
    pub async fn get_push_config(
        &self,
        req: TaskPushNotificationConfigRequest,
        call: &CallContext,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let operation = async {
            self.push_delivery(call)?;
            self.configs_of(&req.task_id, call)
                .await?
                .into_iter()
                .find(|c| c.id.as_deref() == Some(req.id.as_str()))
                .ok_or_else(|| A2aError::task_not_found(&req.task_id))
        };
        self.observed(
            "GetTaskPushNotificationConfig",
            call,
            Some(&req.task_id),
            no_ids,
            operation,
        )
        .await
    }

    /// `ListTaskPushNotificationConfigs`: every config of the task, in one page.
    pub async fn list_push_configs(
        &self,
        req: ListTaskPushNotificationConfigsRequest,
        call: &CallContext,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        let operation = async {
            self.push_delivery(call)?;
            let mut resp = ListTaskPushNotificationConfigsResponse::default();
            resp.configs = self.configs_of(&req.task_id, call).await?;
            Ok(resp)
        };
        self.observed(
            "ListTaskPushNotificationConfigs",
            call,
            Some(&req.task_id),
            no_ids,
            operation,
        )
        .await
    }

    /// `DeleteTaskPushNotificationConfig`: idempotent; stops deliveries to that webhook.
    pub async fn delete_push_config(
        &self,
        req: TaskPushNotificationConfigRequest,
        call: &CallContext,
    ) -> Result<(), A2aError> {
        let operation = async {
            let push = self.push_delivery(call)?;
            self.configs_of(&req.task_id, call).await?;
            push.stop(&req.task_id, &req.id);
            self.runtime
                .store()
                .delete_push_config(&req.task_id, &req.id)
                .await
                .map_err(store_failure)
        };
        self.observed(
            "DeleteTaskPushNotificationConfig",
            call,
            Some(&req.task_id),
            no_ids,
            operation,
        )
        .await
    }

    /// The configs of an existing task the caller may see.
    async fn configs_of(
        &self,
        task_id: &str,
        call: &CallContext,
    ) -> Result<Vec<TaskPushNotificationConfig>, A2aError> {
        self.visible_snapshot(task_id, Some(0), call).await?;
        self.runtime
            .store()
            .push_configs(task_id)
            .await
            .map_err(store_failure)
    }

    /// The push config given with a message, checked (before anything runs).
    pub(super) fn inline_push_config(
        &self,
        req: &a2a_types::SendMessageRequest,
        call: &CallContext,
    ) -> Result<Option<TaskPushNotificationConfig>, A2aError> {
        let Some(config) = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.clone())
        else {
            return Ok(None);
        };
        let push = self.push_delivery(call)?;
        if config.url.is_empty() {
            return Err(A2aError::invalid_field(
                "configuration.taskPushNotificationConfig.url",
                "is required",
            ));
        }
        push.check(&config)?;
        Ok(Some(config))
    }

    /// Delivers the events of the task `start` runs to `config`'s webhook: from its
    /// creation for a new task (the config is stored once the task exists), from now on for
    /// a continued one.
    pub(super) async fn follow_inline(
        &self,
        start: &StartRequest,
        mut config: TaskPushNotificationConfig,
    ) -> Result<(), A2aError> {
        let Some(push) = self.config.push.clone() else {
            return Ok(());
        };
        let task_id = start.task_id.clone();
        if config.id.as_deref().is_none_or(str::is_empty) {
            config.id = Some(a2a_types::new_id());
        }
        config.task_id = Some(task_id.clone());
        let store = self.runtime.store().clone();
        if start.existing.is_some() {
            let seq = store
                .get(&task_id, Some(0))
                .await
                .map_err(store_failure)?
                .map_or(0, |s| s.seq);
            store
                .put_push_config(&task_id, &config)
                .await
                .map_err(store_failure)?;
            let events = self.runtime.follow_from(&task_id, seq);
            push.follow(&task_id, config, events, (store, seq), None);
        } else {
            let events = self.runtime.follow_from(&task_id, 0);
            let stored = config.clone();
            let id = task_id.clone();
            let progress = store.clone();
            let on_first = Box::pin(async move {
                if let Err(e) = store.put_push_config(&id, &stored).await {
                    tracing::warn!(task_id = %id, error = %e, "push: cannot store the config");
                }
            });
            push.follow(&task_id, config, events, (progress, 0), Some(on_first));
        }
        Ok(())
    }

    /// Resumes deliveries to config `config_id` of `task_id` after event `after_seq`, for a
    /// config whose delivering process stopped (a store's lease sweep finds them, and claims
    /// them for this process). `false` when there is nothing to resume: pushes are off, or
    /// the task or config is gone.
    pub async fn resume_push(
        &self,
        task_id: &str,
        config_id: &str,
        after_seq: u64,
    ) -> Result<bool, A2aError> {
        let Some(push) = self.delivery() else {
            return Ok(false);
        };
        let store = self.runtime.store().clone();
        let config = match store.push_configs(task_id).await {
            Ok(configs) => configs
                .into_iter()
                .find(|c| c.id.as_deref() == Some(config_id)),
            Err(a2a_runtime::store::StoreError::NotFound(_)) => None,
            Err(e) => return Err(store_failure(e)),
        };
        let Some(config) = config else {
            return Ok(false);
        };
        let events = self.runtime.follow_from(task_id, after_seq);
        push.follow(task_id, config, events, (store, after_seq), None);
        Ok(true)
    }
}
